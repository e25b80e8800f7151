package integration

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
)

// TestClaimValidation checks that bad portable fields are refused by the API server
// (OpenAPI and CEL) with a message that says what is wrong.
func TestClaimValidation(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, "int-validation")).To(Succeed())
	claim := func(name string, p databasev1.DatabaseParameters) *databasev1.PostgreSQLInstance {
		c := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "int-validation", Name: name}}
		c.Spec.DatabaseParameters = p
		return c
	}
	cases := map[string]struct {
		params databasev1.DatabaseParameters
		want   string
	}{
		"version pattern":  {databasev1.DatabaseParameters{EngineVersion: "fifteen"}, "spec.engineVersion"},
		"storage maximum":  {databasev1.DatabaseParameters{StorageGB: 70000}, "spec.storageGB"},
		"ha needs storage": {databasev1.DatabaseParameters{HighAvailability: true, StorageGB: 5}, "highAvailability needs storageGB >= 10"},
	}
	for name, tc := range cases {
		err := env.Client.Create(ctx, claim("bad", tc.params))
		g.Expect(err).To(HaveOccurred(), name)
		g.Expect(err.Error()).To(ContainSubstring(tc.want), name)
	}

	ok := claim("ok", databasev1.DatabaseParameters{EngineVersion: "15", StorageGB: 20})
	g.Expect(env.Client.Create(ctx, ok)).To(Succeed())
	orig := ok.DeepCopy()
	ok.Spec.EngineVersion = "16"
	err := env.Client.Patch(ctx, ok, client.MergeFrom(orig)) // no resourceVersion: only validation can refuse it
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("engineVersion is immutable"))
}

// TestClassValidation checks the CEL rules on classes: bindingMode is immutable and does
// not apply to KubernetesClusters; ObjectClass patches cannot rename or move the manifest.
func TestClassValidation(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "int-class-validation"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	ref := common.ClassReference{APIVersion: "kubernetes.terraplane.io/v1alpha1", Kind: "ObjectClass", Name: "x"}

	pg := &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg"}, ClassRef: ref}
	g.Expect(env.Client.Create(ctx, pg)).To(Succeed())
	g.Expect(pg.BindingMode).To(Equal(common.BindingImmediate), "defaulted")
	pg.BindingMode = common.BindingWaitForFirstConsumer
	err := env.Client.Update(ctx, pg)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("bindingMode is immutable"))

	kc := &computev1.KubernetesClusterClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kc"}, ClassRef: ref,
		BindingMode: common.BindingWaitForFirstConsumer}
	err = env.Client.Create(ctx, kc)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("bindingMode WaitForFirstConsumer does not apply"))

	for _, path := range []string{"metadata.name", "metadata.namespace", "kind"} {
		oc := &kubernetesv1.ObjectClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "oc"}}
		oc.SpecTemplate.ProviderRef = &common.LocalReference{Name: "pc"}
		oc.SpecTemplate.ForProvider.Manifest = configMapTemplate()
		oc.SpecTemplate.Patches = []kubernetesv1.ObjectPatch{{FromFieldPath: "metadata.name", ToFieldPath: path}}
		err = env.Client.Create(ctx, oc)
		g.Expect(err).To(HaveOccurred(), path)
		g.Expect(err.Error()).To(ContainSubstring("toFieldPath cannot change the manifest's apiVersion, kind, name or namespace"), path)
	}
	oc := &kubernetesv1.ObjectClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "both"}}
	oc.SpecTemplate.ProviderRef = &common.LocalReference{Name: "pc"}
	oc.SpecTemplate.ForProvider.Manifest = configMapTemplate()
	oc.SpecTemplate.Patches = []kubernetesv1.ObjectPatch{{FromFieldPath: "spec.a", FromClusterLabel: "region", ToFieldPath: "data.a"}}
	err = env.Client.Create(ctx, oc)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("set exactly one of fromFieldPath and fromClusterLabel"))
}

// TestNativeKindsRefuseChangeControl checks that Objects, Clusters and ObjectClasses,
// which no Terraform plan backs, refuse the change-control fields.
func TestNativeKindsRefuseChangeControl(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "int-native-change-control"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	const want = "apply to Terraform-backed kinds only"
	for name, edit := range map[string]func(*common.ManagedSpec){
		"approval":           func(s *common.ManagedSpec) { s.Approval = common.ApprovalManual },
		"destructiveChanges": func(s *common.ManagedSpec) { s.DestructiveChanges = common.DestructiveAllow },
		"managementPolicies": func(s *common.ManagedSpec) {
			s.ManagementPolicies = []common.ManagementAction{common.ManagementObserve}
		},
		"approvedPlan": func(s *common.ManagedSpec) { s.ApprovedPlan = "3f9a6c1e2b7d4a50" },
	} {
		obj := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "obj"}}
		obj.Spec.ProviderRef = &common.LocalReference{Name: "pc"}
		obj.Spec.ForProvider.Manifest = configMapTemplate()
		edit(&obj.Spec.ManagedSpec)
		err := env.Client.Create(ctx, obj)
		g.Expect(err).To(MatchError(ContainSubstring(want)), "Object "+name)

		cl := &kubernetesv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cl"}}
		cl.Spec.ProviderRef = &common.LocalReference{Name: "pc"}
		edit(&cl.Spec.ManagedSpec)
		err = env.Client.Create(ctx, cl)
		g.Expect(err).To(MatchError(ContainSubstring(want)), "Cluster "+name)
	}
	oc := &kubernetesv1.ObjectClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "oc"}}
	oc.SpecTemplate.ProviderRef = &common.LocalReference{Name: "pc"}
	oc.SpecTemplate.ForProvider.Manifest = configMapTemplate()
	oc.SpecTemplate.Approval = common.ApprovalManual
	g.Expect(env.Client.Create(ctx, oc)).To(MatchError(ContainSubstring(want)))

	obj := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}}
	obj.Spec.ProviderRef = &common.LocalReference{Name: "pc"}
	obj.Spec.ForProvider.Manifest = configMapTemplate()
	g.Expect(env.Client.Create(ctx, obj)).To(Succeed(), "an Object without them is accepted")
}

func configMapTemplate() workloadv1.Template {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetName("cm")
	u.SetNamespace("default")
	t, err := workloadv1.TemplateFrom(u)
	if err != nil {
		panic(err)
	}
	return t
}
