package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

var (
	networkGVK      = schema.GroupVersionKind{Group: "platform.example.org", Version: "v1alpha1", Kind: "Network"}
	networkClassGVK = networkGVK.GroupVersion().WithKind("NetworkClass")
)

// networkModule reads the test module written for defined claim kinds.
func networkModule(g Gomega) map[string]string {
	files := map[string]string{}
	for _, name := range []string{"main.tf", "variables.tf"} {
		b, err := os.ReadFile(filepath.Join("testdata", "claimdef", "network", name))
		g.Expect(err).NotTo(HaveOccurred())
		files[name] = string(b)
	}
	return files
}

// defined builds an unstructured object of gvk from a JSON body.
func defined(g Gomega, gvk schema.GroupVersionKind, ns, name, body string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	g.Expect(json.Unmarshal([]byte(body), &u.Object)).To(Succeed())
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func definitionReady(g Gomega, ctx context.Context, name string) metav1.Condition {
	def := &apiextv1.ClaimDefinition{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, def)).To(Succeed())
	return framework.Condition(def.Status.Conditions, common.TypeReady)
}

func networkStatus(g Gomega, ctx context.Context, ns, name string) (*unstructured.Unstructured, string, metav1.Condition) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(networkGVK)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)).To(Succeed())
	phase, _, _ := unstructured.NestedString(u.Object, "status", "bindingPhase")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var ready metav1.Condition
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == common.TypeReady {
			s, _ := m["status"].(string)
			ready.Status = metav1.ConditionStatus(s)
			ready.Reason, _ = m["reason"].(string)
			ready.Message, _ = m["message"].(string)
		}
	}
	return u, phase, ready
}

func claimParameters(g Gomega, ctx context.Context) apiextensionsv1.JSONSchemaProps {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "networks.platform.example.org"}, crd)).To(Succeed())
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["parameters"]
}

func TestClaimDefinition(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	appNS := "e2e-claimdef"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "a ModuleClass of the team's network module, and a ClaimDefinition generated from it")
	files := networkModule(g)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "network-module"}, Data: files}
	g.Expect(env.Client.Create(ctx, cm)).To(Succeed())
	src := terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: cm.Name}}
	for name, policy := range map[string]common.ReclaimPolicy{"network": common.ReclaimDelete} {
		mc := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: name}}
		mc.AllowedNamespaces = framework.Allow(appNS)
		mc.SpecTemplate.ReclaimPolicy = policy
		mc.SpecTemplate.Source = src
		mc.SpecTemplate.Connection = []terraformv1.ConnectionMapping{{FromOutput: "endpoint", ToKey: "endpoint"}, {FromOutput: "token_hash", ToKey: "tokenHash"}}
		g.Expect(env.Client.Create(ctx, mc)).To(Succeed())
	}
	def := &apiextv1.ClaimDefinition{ObjectMeta: metav1.ObjectMeta{Name: "networks.platform.example.org"},
		Spec: apiextv1.ClaimDefinitionSpec{Group: "platform.example.org",
			Names:      apiextv1.ClaimDefinitionNames{Kind: "Network", Plural: "networks", ShortNames: []string{"net"}},
			FromModule: &apiextv1.FromModule{ModuleClassRef: apiextv1.ModuleClassReference{Name: "network", Namespace: adminNS}}}}
	g.Expect(env.Client.Create(ctx, def)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ready := definitionReady(g, ctx, def.Name)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), ready.Reason+": "+ready.Message)
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(def), def)).To(Succeed())
	g.Expect(def.Status.Untranslated).To(ConsistOf(HaveField("Condition", "floor(var.size) == var.size")))
	params := claimParameters(g, ctx)
	g.Expect(params.Required).To(ConsistOf("name", "subnets"))
	g.Expect(params.Properties).To(HaveKey("tokenSecretRef"))
	g.Expect(params.Properties).NotTo(HaveKey("token"))

	By(t, "a default NetworkClass in the app namespace")
	class := defined(g, networkClassGVK, appNS, "standard", `{"metadata":{"labels":{"terraplane.io/default":"true"}},
		"classRef":{"apiVersion":"terraform.terraplane.io/v1alpha1","kind":"ModuleClass","name":"network","namespace":"`+adminNS+`"}}`)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())

	By(t, "the API server refuses invalid claims with readable messages")
	for body, want := range map[string]string{
		`{"spec":{"parameters":{"name":"alpha","size":"big","subnets":[]}}}`:                  "spec.parameters.size",
		`{"spec":{"parameters":{"subnets":[]}}}`:                                              "spec.parameters.name: Required value",
		`{"spec":{"parameters":{"name":"Bad_Name","subnets":[]}}}`:                            "name must be lower-case letters, digits and dashes",
		`{"spec":{"parameters":{"name":"alpha","subnets":[{"name":"a"}]}}}`:                   "spec.parameters.subnets[0].cidr: Required value",
		`{"spec":{"parameters":{"name":"alpha","subnets":[],"tags":"team-x"}}}`:               "spec.parameters.tags",
		`{"spec":{"parameters":{"name":"alpha","subnets":[],"tokenSecretRef":{"name":"x"}}}}`: "spec.parameters.tokenSecretRef.key: Required value",
	} {
		err := env.Client.Create(ctx, defined(g, networkGVK, appNS, "invalid", body))
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: %v", body, err)
		g.Expect(err.Error()).To(ContainSubstring(want), body)
	}

	By(t, "a valid claim binds to the default class; the module receives exactly the values, defaults included")
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "net-token"}, StringData: map[string]string{"token": "s3cr3t"}}
	g.Expect(env.Client.Create(ctx, token)).To(Succeed())
	g.Expect(env.Client.Create(ctx, defined(g, networkGVK, appNS, "net-a", `{"spec":{"writeConnectionSecretToRef":{"name":"net-a-conn"},
		"parameters":{"name":"alpha","subnets":[{"name":"a","cidr":"10.0.0.0/24"}],"tags":{"team":"x"},"tokenSecretRef":{"name":"net-token","key":"token"}}}}`))).To(Succeed())
	var ref string
	g.Eventually(func(g Gomega) {
		u, phase, ready := networkStatus(g, ctx, appNS, "net-a")
		g.Expect(phase).To(Equal("Bound"), "%v", u.Object["status"])
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), ready.Message)
		ref, _, _ = unstructured.NestedString(u.Object, "spec", "resourceRef", "name")
		class, _, _ := unstructured.NestedString(u.Object, "spec", "classRef", "name")
		g.Expect(class).To(Equal("standard"))
	}).WithTimeout(timeout).Should(Succeed())
	for _, verb := range []string{"GET", "LIST"} {
		g.Expect(apiserverRequests(g, verb, "networkclasses")).To(BeZero(),
			"the controller read the claim's class from the API server (%s), not from the informer that watches the kind", verb)
	}
	mod := &terraformv1.Module{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: ref}, mod)).To(Succeed())
	var outputs map[string]any
	g.Expect(json.Unmarshal(mod.Status.AtProvider.Raw, &outputs)).To(Succeed())
	var inputs any
	g.Expect(json.Unmarshal([]byte(outputs["inputs"].(string)), &inputs)).To(Succeed())
	var want any
	g.Expect(json.Unmarshal([]byte(`{"name":"alpha","size":3,"subnets":[{"name":"a","cidr":"10.0.0.0/24","public":false}],"tags":{"team":"x"}}`), &want)).To(Succeed())
	g.Expect(inputs).To(Equal(want))
	g.Expect(mod.Spec.VariablesFrom).To(ConsistOf(HaveField("ValueFrom.SecretKeyRef.Namespace", appNS)))
	conn := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "net-a-conn"}, conn)).To(Succeed())
	sum := sha256.Sum256([]byte("s3cr3t"))
	g.Expect(string(conn.Data["endpoint"])).To(Equal("net://alpha"))
	g.Expect(string(conn.Data["tokenHash"])).To(Equal(hex.EncodeToString(sum[:])))
	g.Expect(string(mod.Status.AtProvider.Raw)).NotTo(ContainSubstring(hex.EncodeToString(sum[:])))

	By(t, "static binding to an admin's Module with reclaim policy Retain: the Module is Released with its claim")
	static := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "static-net"}}
	static.Spec.Source = src
	static.Spec.ReclaimPolicy = common.ReclaimRetain
	static.Spec.AllowedNamespaces = framework.Allow(appNS) // claims in appNS may bind it
	static.Spec.ForProvider = &apiextensionsv1.JSON{Raw: []byte(`{"name":"static","subnets":[]}`)}
	g.Expect(env.Client.Create(ctx, static)).To(Succeed())
	g.Expect(env.Client.Create(ctx, defined(g, networkGVK, appNS, "net-static", `{"spec":{"parameters":{"name":"static","subnets":[]},
		"resourceRef":{"apiVersion":"terraform.terraplane.io/v1alpha1","kind":"Module","name":"static-net","namespace":"`+adminNS+`"}}}`))).To(Succeed())
	g.Eventually(func(g Gomega) {
		_, phase, ready := networkStatus(g, ctx, appNS, "net-static")
		g.Expect(phase).To(Equal("Bound"))
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), ready.Message)
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, defined(g, networkGVK, appNS, "net-static", `{}`))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(static), static)).To(Succeed())
		g.Expect(static.Status.BindingPhase).To(Equal(common.BindingPhaseReleased))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a non-breaking change (a new optional variable) reaches the claim kind")
	files["variables.tf"] += "\nvariable \"zone\" {\n  type    = string\n  default = \"a\"\n}\n"
	updateModule(g, ctx, cm, files)
	g.Eventually(func(g Gomega) {
		g.Expect(claimParameters(g, ctx).Properties).To(HaveKey("zone"))
		ready := definitionReady(g, ctx, def.Name)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), ready.Reason+": "+ready.Message)
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a breaking change (removing tags, which net-a sets) is refused; the old schema keeps serving")
	files["variables.tf"] = strings.Replace(files["variables.tf"], "variable \"tags\" {\n  type    = map(string)\n  default = {}\n}\n", "", 1)
	files["main.tf"] = strings.Replace(files["main.tf"], "tags    = var.tags", "tags    = {}", 1)
	updateModule(g, ctx, cm, files)
	g.Eventually(func(g Gomega) {
		ready := definitionReady(g, ctx, def.Name)
		g.Expect(ready.Reason).To(Equal("BreakingChange"))
		g.Expect(ready.Message).To(ContainSubstring(appNS + "/net-a (tags removed)"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(claimParameters(g, ctx).Properties).To(HaveKey("tags"))
	files = networkModule(g)
	updateModule(g, ctx, cm, files)
	g.Eventually(func(g Gomega) {
		g.Expect(definitionReady(g, ctx, def.Name)).To(HaveField("Reason", "Served"))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod)).To(Succeed())
		g.Expect(string(mod.Spec.ForProvider.Raw)).NotTo(ContainSubstring("zone"), "a parameter the module no longer has is left out")
		g.Expect(framework.Condition(mod.Status.Conditions, common.TypeSynced)).To(HaveField("ObservedGeneration", mod.Generation))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "deleting the definition while a claim exists is refused until the claim is gone")
	g.Expect(env.Client.Delete(ctx, def)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ready := definitionReady(g, ctx, def.Name)
		g.Expect(ready.Reason).To(Equal("ClaimsExist"))
		g.Expect(ready.Message).To(ContainSubstring(appNS + "/net-a"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, defined(g, networkGVK, appNS, "net-a", `{}`))).To(Succeed())
	g.Eventually(func(g Gomega) {
		claim := &unstructured.Unstructured{}
		claim.SetGroupVersionKind(networkGVK)
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "net-a"}, claim)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "net-a: %v %v", err, claim.Object["status"])
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(def), def))).To(BeTrue(), "definition: %v", def.Status.Conditions)
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: "networks.platform.example.org"}, &apiextensionsv1.CustomResourceDefinition{}))).To(BeTrue())
	}).WithTimeout(timeout).Should(Succeed())
}

// updateModule writes the module's files into its ConfigMap.
func updateModule(g Gomega, ctx context.Context, cm *corev1.ConfigMap, files map[string]string) {
	g.Expect(updateLatest(ctx, cm, func() {
		cm.Data = files
	})).To(Succeed())
}
