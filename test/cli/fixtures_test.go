package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/claimcrd"
	"terraplane.io/terraplane/internal/trace"
	"terraplane.io/terraplane/test/framework"
)

// adminNS is the admin namespace the CLI defaults to for managed kinds.
const adminNS = "terraplane-system"

// kubeconfigAs writes a kubeconfig for the test cluster whose current context has
// namespace ns, impersonating user (in system:authenticated) when user is set: a
// claimer's kubeconfig, with the rights framework.Env.Tenant grants.
func kubeconfigAs(t *testing.T, user, ns string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(env.ControlPlane.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	ctx.Namespace = ns
	if user != "" {
		auth := cfg.AuthInfos[ctx.AuthInfo].DeepCopy()
		auth.Impersonate, auth.ImpersonateGroups = user, []string{"system:authenticated"}
		cfg.AuthInfos[user] = auth
		ctx.AuthInfo = user
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// condition is a condition as the controllers write it.
func condition(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.Now()}
}

// create makes objects, then writes each one's status (the status subresource) as set
// before creating: what the controllers would have written. Nothing runs terraform.
func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	ctx := context.Background()
	g := NewWithT(t)
	for _, o := range objs {
		status := o.DeepCopyObject().(client.Object)
		g.Expect(env.Client.Create(ctx, o)).To(Succeed(), "create %T %s", o, o.GetName())
		restoreStatus(o, status)
		if hasStatus(status) {
			g.Expect(env.Client.Status().Update(ctx, o)).To(Succeed(), "status of %T %s", o, o.GetName())
		}
	}
}

// restoreStatus copies the status written before Create (which drops it) back onto o.
func restoreStatus(o, from client.Object) {
	to, _ := json.Marshal(o)
	was, _ := json.Marshal(from)
	var cur, old map[string]any
	_ = json.Unmarshal(to, &cur)
	_ = json.Unmarshal(was, &old)
	if s, ok := old["status"]; ok {
		cur["status"] = s
		b, _ := json.Marshal(cur)
		_ = json.Unmarshal(b, o)
	}
}

func hasStatus(o client.Object) bool {
	b, _ := json.Marshal(o)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	s, ok := m["status"].(map[string]any)
	return ok && len(s) > 0
}

// bucketChain makes, directly in the API server, a Bound Bucket claim name in ns and
// what it depends on in the admin namespace: a BucketClass, an S3BucketClass, an aws
// Provider with its credentials Secret, and an S3Bucket holding plan planID that awaits
// approval. It returns the S3Bucket's name.
func bucketChain(t *testing.T, ns, name, planID string) string {
	t.Helper()
	ctx := context.Background()
	for _, n := range []string{ns, adminNS} {
		if err := env.Namespace(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	paused := map[string]string{common.PausedAnnotation: "true"}
	creds := framework.CredentialsSecret(adminNS, name+"-creds", "AKIA", "secret")
	provider := framework.S3Provider(adminNS, name+"-minio", creds.Name, "http://127.0.0.1:1")
	provider.Status.Conditions = []metav1.Condition{condition(common.TypeReady, metav1.ConditionTrue, "Available", "")}
	s3class := framework.S3BucketClass(adminNS, name+"-s3", provider.Name, common.ReclaimDelete, ns)
	class := framework.BucketClass(ns, name+"-standard", s3class, false)
	mg := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: ns + "-" + name + "-x2k9", Annotations: paused}}
	mg.Spec.ProviderRef = &common.LocalReference{Name: provider.Name}
	mg.Spec.ReclaimPolicy = common.ReclaimDelete
	mg.Spec.RunnerPool = name // a pool of its own: only a test that makes its runner sees one
	mg.Spec.WriteConnectionSecretToRef = &common.SecretReference{Name: mg.Name, Namespace: adminNS}
	mg.Spec.ClaimRef = &common.ObjectReference{APIVersion: "storage.terraplane.io/v1alpha1", Kind: "Bucket", Namespace: ns, Name: name}
	mg.Status.Conditions = []metav1.Condition{condition(common.TypeReady, metav1.ConditionTrue, "Available", ""),
		condition(common.TypeSynced, metav1.ConditionFalse, common.ReasonAwaitingApproval, "plan "+planID+" awaits approval (spec.approvedPlan)")}
	mg.Status.Terraform.Plan = &common.PlanSummary{ID: planID, Reason: common.PlanUpdate, Change: 1, CreatedAt: metav1.NewTime(time.Now().Add(-time.Hour))}
	mg.Status.Terraform.LastApply = &common.ApplySummary{ID: "0000aaaa0000aaaa", Add: 1, Time: metav1.NewTime(time.Now().Add(-2 * time.Hour))}
	mg.Status.BindingPhase = common.BindingPhaseBound
	claim := framework.Bucket(ns, name, class.Name, name+"-bucket")
	claim.Spec.ResourceRef = &common.ObjectReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3Bucket", Namespace: adminNS, Name: mg.Name}
	claim.Status.BindingPhase = common.BindingPhaseBound
	claim.Status.Conditions = []metav1.Condition{condition(common.TypeReady, metav1.ConditionTrue, "Available", ""),
		condition(common.TypeSynced, metav1.ConditionTrue, "ReconcileSuccess", "")}
	create(t, creds, provider, s3class, class, mg, claim,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: mg.Name}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-bucket"}})
	return mg.Name
}

// definedClaim makes a claim kind Network of group cli.example.org (short name cnet,
// class kind NetworkOffer) as a ClaimDefinition would, and a Bound claim name in ns of
// it, through a ModuleClass, to a Module with a ProviderConfig whose credentials Secret
// is missing. It returns the Module's name.
func definedClaim(t *testing.T, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	g := NewWithT(t)
	def := &apiextv1.ClaimDefinition{ObjectMeta: metav1.ObjectMeta{Name: "networks.cli.example.org"},
		Spec: apiextv1.ClaimDefinitionSpec{Group: "cli.example.org", ClassKind: "NetworkOffer",
			Names:  apiextv1.ClaimDefinitionNames{Kind: "Network", Plural: "networks", ShortNames: []string{"cnet"}},
			Schema: &apiextensionsv1.JSON{Raw: []byte(`{"type":"object"}`)}}}
	if err := env.Client.Create(ctx, def); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	for _, crd := range []*apiextensionsv1.CustomResourceDefinition{
		claimcrd.ClaimCRD(def, apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}),
		claimcrd.ClassCRD(def),
	} {
		if err := env.Client.Create(ctx, crd); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(crd), crd)).To(Succeed())
			established := false
			for _, c := range crd.Status.Conditions {
				established = established || c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
			}
			g.Expect(established).To(BeTrue())
		}).WithTimeout(timeout).Should(Succeed())
	}
	for _, n := range []string{ns, adminNS} {
		g.Expect(env.Namespace(ctx, n)).To(Succeed())
	}
	pc := &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: name + "-random"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random",
			Credentials: []terraformv1.CredentialEnv{{Env: "RANDOM_TOKEN", SecretKeyRef: terraformv1.SecretKeySelector{Name: name + "-token", Key: "token"}}}}}
	mc := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: name + "-network"}, AllowedNamespaces: framework.Allow(ns)}
	mc.SpecTemplate.Source.ConfigMap = &terraformv1.ConfigMapSource{Name: "network-module"}
	mc.SpecTemplate.ReclaimPolicy = common.ReclaimDelete
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: ns + "-" + name + "-q7", Annotations: map[string]string{common.PausedAnnotation: "true"}}}
	m.Spec.Source.ConfigMap = &terraformv1.ConfigMapSource{Name: "network-module"}
	m.Spec.ReclaimPolicy = common.ReclaimDelete
	m.Spec.ProviderConfigRefs = []common.LocalReference{{Name: pc.Name}}
	m.Status.Conditions = []metav1.Condition{condition(common.TypeReady, metav1.ConditionFalse, "Creating", "terraform apply is running"),
		condition(common.TypeSynced, metav1.ConditionTrue, "ReconcileSuccess", "")}
	create(t, pc, mc, m)
	offer := unstructuredObj("cli.example.org/v1alpha1", "NetworkOffer", ns, name+"-small", map[string]any{
		"classRef": map[string]any{"apiVersion": terraformv1.GroupVersion.String(), "kind": "ModuleClass", "name": mc.Name, "namespace": adminNS}})
	claim := unstructuredObj("cli.example.org/v1alpha1", "Network", ns, name, map[string]any{"spec": map[string]any{
		"classRef":    map[string]any{"name": offer.GetName()},
		"resourceRef": map[string]any{"apiVersion": terraformv1.GroupVersion.String(), "kind": "Module", "name": m.Name, "namespace": adminNS},
		"parameters":  map[string]any{}}})
	claim.Object["status"] = map[string]any{"bindingPhase": "Bound", "conditions": []any{map[string]any{
		"type": "Ready", "status": "False", "reason": "Creating", "message": "the Module is not ready", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
	create(t, offer, claim)
	return m.Name
}

func ptr[T any](v T) *T { return &v }

func unstructuredObj(apiVersion, kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: fields}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// application makes a KubernetesApplication name in ns placed on a kubernetes
// ProviderConfig in the admin namespace, and the resource it controls, waiting for a
// Secret that does not exist.
func application(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	g := NewWithT(t)
	for _, n := range []string{ns, adminNS} {
		g.Expect(env.Namespace(ctx, n)).To(Succeed())
	}
	pc := &kubernetesv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: name + "-target"},
		Spec: kubernetesv1.ProviderConfigSpec{CredentialsSecretRef: kubernetesv1.CredentialsSecretReference{Name: name + "-kubeconfig"}, AllowedNamespaces: framework.Allow(ns)}}
	pc.Status.Conditions = []metav1.Condition{condition(common.TypeReady, metav1.ConditionTrue, "Available", "")}
	target := &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig, Name: pc.Name, Namespace: adminNS}
	app := &workloadv1.KubernetesApplication{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: workloadv1.KubernetesApplicationSpec{ProviderConfigRef: &workloadv1.ProviderConfigReference{Name: pc.Name, Namespace: adminNS},
			ResourceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}}}
	app.Status = workloadv1.KubernetesApplicationStatus{State: workloadv1.ApplicationStatePending, ClusterRef: target, DesiredResources: 1,
		Conditions: []metav1.Condition{condition(common.TypeReady, metav1.ConditionFalse, "Pending", "1 of 1 resources not submitted")}}
	create(t, pc, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: name + "-kubeconfig"}}, app)
	var tmpl workloadv1.Template
	g.Expect(json.Unmarshal([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+`"},"data":{"a":"b"}}`), &tmpl)).To(Succeed())
	r := &workloadv1.KubernetesApplicationResource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-config", Labels: map[string]string{"app": name},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: workloadv1.GroupVersion.String(), Kind: "KubernetesApplication", Name: app.Name, UID: app.UID, Controller: ptr(true)}}},
		Spec: workloadv1.KubernetesApplicationResourceSpec{Template: tmpl, Secrets: []corev1.LocalObjectReference{{Name: name + "-db"}}, TargetRef: target}}
	r.Status = workloadv1.KubernetesApplicationResourceStatus{State: workloadv1.ResourceStatePending, ClusterRef: target,
		Conditions: []metav1.Condition{condition(common.TypeSynced, metav1.ConditionFalse, "SecretNotFound", "Secret "+name+"-db does not exist")}}
	create(t, r)
}

// traced runs trace -o json with args and returns the tree, flattened as
// "<depth>Kind/namespace/name status".
func traced(t *testing.T, environ []string, args ...string) []string {
	t.Helper()
	r := terraplane(t, environ, append([]string{"trace", "-o", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("trace %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
	}
	var root trace.Node
	if err := json.Unmarshal([]byte(r.stdout), &root); err != nil {
		t.Fatalf("trace -o json does not parse: %v\n%s", err, r.stdout)
	}
	var out []string
	var walk func(n *trace.Node, depth int)
	walk = func(n *trace.Node, depth int) {
		out = append(out, strings.Repeat("  ", depth)+n.Kind+"/"+n.Namespace+"/"+n.Name+" "+n.Status())
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	walk(&root, 0)
	return out
}
