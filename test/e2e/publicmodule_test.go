package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/test/framework"
)

// TestPublicModule takes a module shaped like the popular public ones (200+ variables,
// any, map(map(any)) and list(object) inputs, local submodules, an unconditional
// aws_caller_identity, object lock, a sensitive input) through `terraplane claim
// generate` and kubectl apply to a Ready claim against moto, as docs/claim-definitions.md
// walks through it, and then through drift, a ProviderConfig edit and a stuck delete.
func TestPublicModule(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	appNS := "e2e-pubmod"
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	moto, err := framework.StartMoto(ctx, t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	defer moto.Stop()
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	dir := writeStoreModule(g, filepath.Join(t.TempDir(), "store"))

	By(t, "claim generate refuses a kind another group serves")
	out, err := runTerraplane(t, "claim", "generate", dir, "--kind", "Bucket", "--group", "storage.example.org")
	g.Expect(err).To(HaveOccurred(), out)
	g.Expect(out).To(ContainSubstring("storage.terraplane.io"))

	By(t, "claim generate writes the module tree, a ProviderConfig stub for hashicorp/aws and the class's providerConfigRefs")
	stub := filepath.Join(t.TempDir(), "stub.yaml")
	out, err = runTerraplane(t, "claim", "generate", dir, "--kind", "Store", "--group", "storage.example.org", "-n", adminNS, "--out", stub)
	g.Expect(err).NotTo(HaveOccurred(), out)
	b, err := os.ReadFile(stub)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(b)).To(And(ContainSubstring("module.tar.gz"), ContainSubstring("kind: ProviderConfig"),
		ContainSubstring("source: hashicorp/aws"), ContainSubstring("providerConfigRefs:\n  - name: aws"),
		ContainSubstring("terraform.terraplane.io/stub: \"true\"")))

	By(t, "with the ProviderConfig named, the manifests apply as generated; the class waits for that ProviderConfig")
	manifests := filepath.Join(t.TempDir(), "store.yaml")
	out, err = runTerraplane(t, "claim", "generate", dir, "--kind", "Store", "--group", "storage.example.org", "-n", adminNS,
		"--allow-namespace", appNS, "--provider-config", "aws=moto-aws", "--out", manifests)
	g.Expect(err).NotTo(HaveOccurred(), out)
	kubectlApply(g, manifests)
	g.Eventually(func(g Gomega) {
		ready := moduleClassReady(g, ctx, adminNS, "store")
		g.Expect(ready.Reason).To(Equal("ProviderNotConfigured"), ready.Message)
		g.Expect(ready.Message).To(ContainSubstring("moto-aws"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Create(ctx, motoCredentials(adminNS, "moto-credentials"))).To(Succeed())
	pc := motoProviderConfig(adminNS, "moto-aws", "moto-credentials", moto.Endpoint)
	g.Expect(env.Client.Create(ctx, pc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ready := moduleClassReady(g, ctx, adminNS, "store")
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), ready.Reason+": "+ready.Message)
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "the module's top-level files alone (what kubectl create configmap --from-file takes): the class is not Ready, and a Module of them deletes without terraform")
	flat := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "store-flat"}, Data: map[string]string{}}
	top, err := os.ReadDir(dir)
	g.Expect(err).NotTo(HaveOccurred())
	for _, f := range top {
		if !f.IsDir() {
			b, err := os.ReadFile(filepath.Join(dir, f.Name()))
			g.Expect(err).NotTo(HaveOccurred())
			flat.Data[f.Name()] = string(b)
		}
	}
	g.Expect(env.Client.Create(ctx, flat)).To(Succeed())
	flatClass := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "store-flat"}}
	flatClass.SpecTemplate.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: flat.Name}}
	flatClass.SpecTemplate.ProviderConfigRefs = []common.LocalReference{{Name: pc.Name}}
	g.Expect(env.Client.Create(ctx, flatClass)).To(Succeed())
	flatModule := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "store-flat"}}
	flatModule.Spec.Source = flatClass.SpecTemplate.Source
	flatModule.Spec.ProviderConfigRefs = flatClass.SpecTemplate.ProviderConfigRefs
	flatModule.Spec.ForProvider = &apiextensionsv1.JSON{Raw: []byte(`{"bucket": "flat"}`)}
	g.Expect(env.Client.Create(ctx, flatModule)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ready := moduleClassReady(g, ctx, adminNS, flatClass.Name)
		g.Expect(ready.Reason).To(Equal("ModuleIncomplete"), ready.Message)
		g.Expect(ready.Message).To(ContainSubstring("./modules/bucket"))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(flatModule), flatModule)).To(Succeed())
		g.Expect(framework.Condition(flatModule.Status.Conditions, common.TypeSynced).Reason).To(Equal("ModuleIncomplete"), "%v", flatModule.Status.Conditions)
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, flatModule)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(flatModule), flatModule))).To(BeTrue(), "%v", flatModule.Status.Conditions)
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "the platform team fixes a setting in the class, adds connection values and types lifecycle_rule")
	mc := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "store"}}
	region := "us-east-1"
	g.Expect(updateLatest(ctx, mc, func() {
		mc.SpecTemplate.ForProvider = &apiextensionsv1.JSON{Raw: []byte(`{"attach_public_policy": false}`)}
		mc.SpecTemplate.Connection = append(mc.SpecTemplate.Connection,
			terraformv1.ConnectionMapping{ToKey: "region", Value: &region},
			terraformv1.ConnectionMapping{ToKey: "endpoint", FromProviderConfig: &terraformv1.ProviderConfigValue{Name: pc.Name, ConfigPath: "endpoints.0.s3"}},
			terraformv1.ConnectionMapping{ToKey: "accessKeyID", FromProviderConfig: &terraformv1.ProviderConfigValue{Name: pc.Name, Credential: "AWS_ACCESS_KEY_ID"}})
	})).To(Succeed())
	def := &apiextv1.ClaimDefinition{ObjectMeta: metav1.ObjectMeta{Name: "stores.storage.example.org"}}
	g.Expect(updateLatest(ctx, def, func() {
		def.Spec.FromModule.ParameterSchemas = map[string]apiextensionsv1.JSON{"lifecycle_rule": {Raw: []byte(
			`{"type": "array", "items": {"type": "object", "required": ["days"], "properties": {"days": {"x-kubernetes-int-or-string": true}}}}`)}}
	})).To(Succeed())
	var params apiextensionsv1.JSONSchemaProps
	g.Eventually(func(g Gomega) {
		g.Expect(definitionReady(g, ctx, def.Name)).To(HaveField("Status", metav1.ConditionTrue))
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: def.Name}, crd)).To(Succeed())
		params = crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["parameters"]
		g.Expect(params.Properties).NotTo(HaveKey("attach_public_policy"), "the class fixes it")
		g.Expect(params.Properties["lifecycle_rule"].Items).NotTo(BeNil(), "typed by parameterSchemas")
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(len(params.Properties)).To(BeNumerically(">", fillerVariables))
	g.Expect(params.Required).To(ConsistOf("bucket"))
	for name, p := range params.Properties {
		g.Expect(p.Default).To(BeNil(), "parameter %s has a default: claims store what their authors write", name)
	}
	g.Expect(params.Properties).To(HaveKey("replication_tokenSecretRef"))
	g.Expect(params.Properties).To(HaveKey("cors_rule"))

	By(t, "a default StoreClass; the API server refuses a typo inside the typed lifecycle_rule")
	class := defined(g, storeClassGVK, appNS, "standard", `{"metadata":{"labels":{"terraplane.io/default":"true"}},
		"classRef":{"apiVersion":"terraform.terraplane.io/v1alpha1","kind":"ModuleClass","name":"store","namespace":"`+adminNS+`"}}`)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	err = env.Client.Create(ctx, defined(g, storeGVK, appNS, "typo", `{"spec":{"parameters":{"bucket":"typo","lifecycle_rule":[{"dayz":30}]}}}`), client.DryRunAll)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.parameters.lifecycle_rule[0].days: Required value"))

	By(t, "a claim as the module's README writes it: a number for a string, a bool for a string; days only terraform checks")
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "replication"}, StringData: map[string]string{"token": "r3pl1cat10n"}}
	g.Expect(env.Client.Create(ctx, token)).To(Succeed())
	written := `{"bucket":"photos","port":8443,"versioning_enabled":true,"object_lock_enabled":true,"tags":{"team":"a"},
		"lifecycle_rule":[{"days":"thirty"}],"cors_rule":{"main":{"max_age_seconds":3000,"max_rules":2}},
		"grants":[{"type":"CanonicalUser","permissions":["READ","WRITE"]}],"replication_tokenSecretRef":{"name":"replication","key":"token"}}`
	g.Expect(env.Client.Create(ctx, defined(g, storeGVK, appNS, "photos",
		`{"spec":{"writeConnectionSecretToRef":{"name":"photos-conn"},"parameters":`+written+`}}`))).To(Succeed())
	claim, _ := storeClaim(g, ctx, appNS, "photos")
	stored, _, _ := unstructured.NestedMap(claim.Object, "spec", "parameters")
	var want map[string]any
	g.Expect(json.Unmarshal([]byte(written), &want)).To(Succeed())
	g.Expect(sortedKeys(stored)).To(Equal(sortedKeys(want)), "the claim stores what its author wrote, no defaults")
	g.Eventually(func(g Gomega) {
		_, conds := storeClaim(g, ctx, appNS, "photos")
		synced := conds[common.TypeSynced]
		g.Expect(synced.Reason).To(Equal("InvalidInput"), synced.Message)
		g.Expect(synced.Message).To(ContainSubstring("parameter spec.parameters.lifecycle_rule: "))
		g.Expect(synced.Message).To(ContainSubstring(`"thirty"`))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "fixed, the claim is Ready; its Secret holds outputs, a literal value and the ProviderConfig's values, and the class's setting won")
	claim, _ = storeClaim(g, ctx, appNS, "photos")
	g.Expect(updateLatest(ctx, claim, func() {
		g.Expect(unstructured.SetNestedSlice(claim.Object, []any{map[string]any{"days": int64(30)}}, "spec", "parameters", "lifecycle_rule")).To(Succeed())
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		_, conds := storeClaim(g, ctx, appNS, "photos")
		g.Expect(conds[common.TypeReady].Status).To(Equal(metav1.ConditionTrue), "%v", conds)
	}).WithTimeout(timeout).Should(Succeed())
	conn := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "photos-conn"}, conn)).To(Succeed())
	got := map[string]string{}
	for k, v := range conn.Data {
		got[k] = string(v)
	}
	g.Expect(got).To(And(HaveKeyWithValue("bucket_id", "store-photos"), HaveKeyWithValue("port", "8443"),
		HaveKeyWithValue("versioning_enabled", "true"), HaveKeyWithValue("public_policy", "false"),
		HaveKeyWithValue("account_id", "123456789012"), HaveKeyWithValue("replication_token_set", "true"),
		HaveKeyWithValue("expiration_days", "[30]"), HaveKeyWithValue("cors_rules", "1"),
		HaveKeyWithValue("region", "us-east-1"), HaveKeyWithValue("endpoint", moto.Endpoint),
		HaveKeyWithValue("accessKeyID", "AKIAEXAMPLESTORE")))
	g.Expect(got).NotTo(HaveKey("secretAccessKey"))
	s3 := motoS3(g, moto.Endpoint)
	lock, _, _, _, err := s3.GetObjectLockConfig(ctx, "store-photos")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lock).To(Equal("Enabled"))

	By(t, "drift: the claim asks for a drift check, and shows the drift its resource corrected")
	claim, _ = storeClaim(g, ctx, appNS, "photos")
	mod := storeModule(g, ctx, claim)
	drifted, err := tags.NewTags(map[string]string{"team": "someone-else"}, false)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s3.SetBucketTagging(ctx, "store-photos", drifted)).To(Succeed())
	asked := time.Now().UTC().Format(time.RFC3339Nano)
	g.Expect(updateLatest(ctx, claim, func() {
		claim.SetAnnotations(map[string]string{common.RequestedAtAnnotation: asked})
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		claim, conds := storeClaim(g, ctx, appNS, "photos")
		g.Expect(conds[common.TypeDrifted].Reason).To(Equal(common.ReasonDriftCorrected), "%v", conds)
		g.Expect(conds[common.TypeDrifted].Message).To(ContainSubstring("Module " + adminNS + "/" + mod.Name))
		g.Expect(eventReasons(g, ctx, claim)).To(ContainElement(common.ReasonDriftCorrected))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod)).To(Succeed())
		g.Expect(mod.Status.Terraform.LastHandledRequest).To(Equal(asked))
	}).WithTimeout(timeout).Should(Succeed())
	bucketTags, err := s3.GetBucketTagging(ctx, "store-photos")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bucketTags.ToMap()).To(HaveKeyWithValue("team", "a"))

	By(t, "a ProviderConfig edit reaches the Module that names it in providerConfigRefs through a new revision of its class, well before its drift interval")
	g.Expect(updateLatest(ctx, pc, func() {
		pc.Spec.Config.Raw = []byte(strings.Replace(string(pc.Spec.Config.Raw), `"region"`, `"default_tags": [{"tags": {"env": "e2e"}}], "region"`, 1))
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		bucketTags, err := s3.GetBucketTagging(ctx, "store-photos")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(bucketTags.ToMap()).To(HaveKeyWithValue("env", "e2e"))
	}).WithTimeout(2 * time.Minute).Should(Succeed())

	By(t, "a bucket holding an object cannot be destroyed: the claim says so; abandoning its Module releases it and keeps bucket and state")
	_, err = s3.PutObject(ctx, "store-photos", "kept.txt", strings.NewReader("kept"), 4, minio.PutObjectOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	g.Eventually(func(g Gomega) {
		_, conds := storeClaim(g, ctx, appNS, "photos")
		g.Expect(conds[common.TypeSynced].Reason).To(Equal("DeletionBlocked"), "%v", conds)
		g.Expect(conds[common.TypeSynced].Message).To(ContainSubstring("BucketNotEmpty"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(updateLatest(ctx, mod, func() {
		mod.Annotations[common.AbandonAnnotation] = "true"
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "photos"}, defined(g, storeGVK, appNS, "photos", `{}`))
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the claim is gone: %v", err)
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), &terraformv1.Module{}))).To(BeTrue())
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(eventReasons(g, ctx, mod)).To(ContainElement("Abandoned"))
	exists, err := s3.BucketExists(ctx, "store-photos")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exists).To(BeTrue(), "the abandoned bucket is kept")
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: resource.StateSecretName(mod)}, &corev1.Secret{})).To(Succeed(), "the state is kept")
}

// sortedKeys lists a map's keys in order.
func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
