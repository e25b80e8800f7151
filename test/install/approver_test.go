package install

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/resource"
)

// TestApproverRole: the chart's approver ClusterRole (the same as config/rbac's), bound
// in one namespace to a reviewer, lets the reviewer read Plans and patch the Terraform
// managed resources (to set spec.approvedPlan), and nothing else: no Secret at all, so
// neither the state nor a saved plan, and no class. It covers every Terraform managed
// kind. Checked with `kubectl auth can-i --as` and with the reviewer's own requests.
func TestApproverRole(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	helm := tool(t, "helm", "make tools-test")
	kubectl := tool(t, "kubectl", "make tools")
	const ns, reviewer = "review", "rita"
	manifests := runTool(g, helm, "template", "terraplane", chartDir, "-n", "terraplane-system")
	role := clusterRole(g, manifests, "terraplane-approver")
	raw, err := os.ReadFile("../../config/rbac/approver_role.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(clusterRole(g, string(raw), "terraplane-approver").Rules).To(Equal(role.Rules), "config/rbac/approver_role.yaml and the chart grant the same")

	By(t, "the role patches exactly the Terraform managed kinds, and reads Plans")
	var want []string
	for _, k := range kinds.NewRegistry(nil).TerraformKinds() {
		m, err := env.Client.RESTMapper().RESTMapping(k.GVK.GroupKind(), k.GVK.Version)
		g.Expect(err).NotTo(HaveOccurred())
		want = append(want, m.Resource.Resource+"."+m.Resource.Group)
	}
	var patched []string
	for _, r := range role.Rules {
		for _, group := range r.APIGroups {
			for _, res := range r.Resources {
				if slices.Contains(r.Verbs, "patch") {
					patched = append(patched, res+"."+group)
				}
			}
		}
	}
	g.Expect(patched).To(ConsistOf(want))

	By(t, "bound in one namespace, it allows reading Plans and approving, and no Secret")
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Namespace(ctx, "terraplane-system")).To(Succeed())
	applyManifests(g, manifests)
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "approvers"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: reviewer}}}
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, binding))).To(Succeed())
	for _, tc := range []struct {
		verb, what string
		allowed    bool
	}{
		{"get", "plans.terraform.terraplane.io", true},
		{"list", "plans.terraform.terraplane.io", true},
		{"watch", "plans.terraform.terraplane.io", true},
		{"patch", "modules.terraform.terraplane.io/net", true},
		{"patch", "s3buckets.storage.aws.terraplane.io", true},
		{"patch", "databases.database.postgresql.terraplane.io", true},
		{"get", "rdsinstances.database.aws.terraplane.io", true},
		{"get", "secrets", false},
		{"list", "secrets", false},
		{"get", "secrets/tfstate-default-0a1b2c3d", false},
		{"get", "secrets/tfplan-0a1b2c3d", false},
		{"create", "plans.terraform.terraplane.io", false},
		{"update", "plans.terraform.terraplane.io", false},
		{"delete", "modules.terraform.terraplane.io", false},
		{"create", "modules.terraform.terraplane.io", false},
		{"patch", "modules.terraform.terraplane.io/net --subresource=status", false},
		{"patch", "moduleclasses.terraform.terraplane.io", false},
		{"get", "providerconfigs.terraform.terraplane.io", false},
		{"patch", "objects.kubernetes.terraplane.io", false},
		{"get", "leases.coordination.k8s.io", false},
	} {
		args := append([]string{"--kubeconfig", env.ControlPlane.Kubeconfig, "auth", "can-i", tc.verb}, strings.Fields(tc.what)...)
		args = append(args, "-n", ns, "--as", reviewer)
		out, err := exec.Command(kubectl, args...).Output()
		var exit *exec.ExitError
		g.Expect(err == nil || errors.As(err, &exit)).To(BeTrue(), "kubectl %s: %v", strings.Join(args, " "), err)
		want := map[bool]string{true: "yes", false: "no"}[tc.allowed]
		g.Expect(strings.TrimSpace(string(out))).To(Equal(want), "kubectl auth can-i %s %s --as %s", tc.verb, tc.what, reviewer)
	}
	g.Expect(exec.Command(kubectl, "--kubeconfig", env.ControlPlane.Kubeconfig, "auth", "can-i", "get", "plans.terraform.terraplane.io",
		"-n", "default", "--as", reviewer).Run()).To(HaveOccurred(), "nothing outside the namespace it is bound in")

	By(t, "the reviewer reads a Plan and approves its id, and cannot read the state or the saved plan")
	as := impersonate(g, reviewer)
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "net"}}
	m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "net"}}
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, m))).To(Succeed())
	plan := &terraformv1.Plan{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: resource.PlanName(m)},
		ResourceRef: common.ObjectReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "Module", Name: "net", UID: m.UID},
		Summary:     common.PlanSummary{ID: "3f9a6c1e2b7d4a50", Reason: common.PlanUpdate, Change: 1, CreatedAt: metav1.Now()},
		Text:        "  # module.this.terraform_data.a will be updated in-place\n"}
	saved := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: resource.PlanSecretName(m)},
		Data: map[string][]byte{resource.PlanMetaKey: []byte(`{"id":"3f9a6c1e2b7d4a50"}`)}}
	state := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: resource.StateSecretName(m)}}
	for _, o := range []client.Object{plan, saved, state} {
		g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, o))).To(Succeed())
	}
	got := &terraformv1.Plan{}
	g.Expect(as.Get(ctx, client.ObjectKeyFromObject(plan), got)).To(Succeed())
	g.Expect(got.Text).To(ContainSubstring("terraform_data.a"))
	for _, sec := range []*corev1.Secret{saved, state} {
		err := as.Get(ctx, client.ObjectKeyFromObject(sec), &corev1.Secret{})
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "get Secret %s: %v", sec.Name, err)
	}
	g.Expect(apierrors.IsForbidden(as.List(ctx, &corev1.SecretList{}, client.InNamespace(ns)))).To(BeTrue())
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"approvedPlan":"3f9a6c1e2b7d4a50"}}`))
	g.Expect(as.Patch(ctx, &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "net"}}, patch)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
	g.Expect(m.Spec.ApprovedPlan).To(Equal("3f9a6c1e2b7d4a50"))

	checkApproverPolicy(t, g, ctx, manifests, as, ns, patched)
}

// checkApproverPolicy: the chart's ValidatingAdmissionPolicy (the same as config/rbac's),
// which covers every kind the approver patches, lets the approver (as) change the
// Module ns/net's spec.approvedPlan and nothing else; an admin, who may update it, is not
// limited. The API server's own admission decides.
func checkApproverPolicy(t *testing.T, g Gomega, ctx context.Context, manifests string, as client.Client, ns string, patched []string) {
	By(t, "the approver policy covers every kind the approver patches, as config/rbac's does")
	policy := approverPolicy(g, manifests, "terraplane-approver")
	raw, err := os.ReadFile("../../config/rbac/approver_policy.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(approverPolicy(g, string(raw), "terraplane-approver").Spec).To(Equal(policy.Spec), "config/rbac/approver_policy.yaml and the chart's policy are the same")
	var matched []string
	for _, r := range policy.Spec.MatchConstraints.ResourceRules {
		g.Expect(r.Operations).To(ConsistOf(admissionregistrationv1.Update))
		for _, group := range r.APIGroups {
			for _, res := range r.Resources {
				matched = append(matched, res+"."+group)
			}
		}
	}
	g.Expect(matched).To(ConsistOf(patched))
	approverLimited(t, g, ctx, as, ns)
}

// approverLimited: the approver (as) may change the Module ns/net's spec.approvedPlan
// (3f9a6c1e2b7d4a50 now) and nothing else, once the approver policy is in force; an admin
// may change the rest.
func approverLimited(t *testing.T, g Gomega, ctx context.Context, as client.Client, ns string) {
	By(t, "the approver may change spec.approvedPlan only: not the source it would then approve, nor metadata")
	net := func() *terraformv1.Module {
		return &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "net"}}
	}
	merge := func(p string) client.Patch { return client.RawPatch(types.MergePatchType, []byte(p)) }
	const source = `{"spec":{"source":{"configMap":{"name":"evil"}}}}`
	g.Eventually(func() error { return as.Patch(ctx, net(), merge(source), client.DryRunAll) }).
		WithTimeout(30*time.Second).WithPolling(200*time.Millisecond).Should(Satisfy(apierrors.IsForbidden), "the policy is in force")
	for name, p := range map[string]string{
		"the source":                   source,
		"the source with the approval": `{"spec":{"approvedPlan":"0000000000000000","source":{"configMap":{"name":"evil"}}}}`,
		"the approval policy":          `{"spec":{"approval":"Automatic"}}`,
		"the reclaim policy":           `{"spec":{"reclaimPolicy":"Retain"}}`,
		"the connection Secret":        `{"spec":{"writeConnectionSecretToRef":{"name":"loot","namespace":"terraplane-system"}}}`,
		"an annotation":                `{"metadata":{"annotations":{"terraplane.io/paused":"true"}}}`,
		"a label":                      `{"metadata":{"labels":{"team":"rita"}}}`,
		"a finalizer":                  `{"metadata":{"finalizers":["example.org/hold"]}}`,
	} {
		err := as.Patch(ctx, net(), merge(p))
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the approver changed %s: %v", name, err)
		g.Expect(err.Error()).To(ContainSubstring("spec.approvedPlan"), "the refusal says what the approver may do")
	}
	m := net()
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
	g.Expect(m.Spec.Source.ConfigMap.Name).To(Equal("net"))
	g.Expect(m.Spec.ApprovedPlan).To(Equal("3f9a6c1e2b7d4a50"))
	g.Expect(m.Annotations).NotTo(HaveKey("terraplane.io/paused"))
	g.Expect(as.Patch(ctx, net(), merge(`{"spec":{"approvedPlan":"4a50f9a6c1e2b7d3"}}`))).To(Succeed(), "approving another plan")

	By(t, "an admin, who may update the Module, changes the rest")
	bindingAdmin := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "admins"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "terraplane-admin-kinds"}, // terraplane-admin's rules (no aggregation runs here)
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "ada"}}}
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, bindingAdmin))).To(Succeed())
	admin := impersonate(g, "ada")
	g.Eventually(func() error {
		return admin.Patch(ctx, net(), merge(`{"spec":{"source":{"configMap":{"name":"net-v2"}}}}`))
	}).
		WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

// approverPolicy finds the ValidatingAdmissionPolicy name in manifests.
func approverPolicy(g Gomega, manifests, name string) *admissionregistrationv1.ValidatingAdmissionPolicy {
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			break
		}
		g.Expect(err).NotTo(HaveOccurred())
		if u.GetKind() != "ValidatingAdmissionPolicy" || u.GetName() != name {
			continue
		}
		p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, p)).To(Succeed())
		return p
	}
	g.Expect(errors.New("no ValidatingAdmissionPolicy " + name)).NotTo(HaveOccurred())
	return nil
}

// clusterRole finds the ClusterRole name in manifests.
func clusterRole(g Gomega, manifests, name string) *rbacv1.ClusterRole {
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			break
		}
		g.Expect(err).NotTo(HaveOccurred())
		if u.GetKind() != "ClusterRole" || u.GetName() != name {
			continue
		}
		role := &rbacv1.ClusterRole{}
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role)).To(Succeed())
		return role
	}
	g.Expect(errors.New("no ClusterRole " + name)).NotTo(HaveOccurred())
	return nil
}

// impersonate is a client of the test API server acting as user.
func impersonate(g Gomega, user string) client.Client {
	cfg := rest.CopyConfig(env.ControlPlane.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: kinds.NewScheme()})
	g.Expect(err).NotTo(HaveOccurred())
	return c
}
