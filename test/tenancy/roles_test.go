package tenancy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/config/crd"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/kinds"
)

// who is a subject of a SubjectAccessReview.
type who struct {
	user   string
	groups []string
}

// serviceAccount is how the API server sees ServiceAccount ns/name.
func serviceAccount(ns, name string) who {
	return who{"system:serviceaccount:" + ns + ":" + name, []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
}

// access is one question to the authorizer.
type access struct {
	verb, group, resource, namespace string
}

// allowed asks the API server whether s may do a.
func allowed(g Gomega, ctx context.Context, s who, a access) bool {
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: s.user, Groups: s.groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: a.verb, Group: a.group, Resource: a.resource, Namespace: a.namespace}}}
	g.Expect(env.Client.Create(ctx, review)).To(Succeed())
	return review.Status.Allowed
}

// expectAccess checks, until the aggregation controller has caught up, that s may do each
// of may and none of mayNot.
func expectAccess(g Gomega, ctx context.Context, name string, s who, may, mayNot []access) {
	g.Eventually(func(g Gomega) {
		for _, a := range may {
			g.Expect(allowed(g, ctx, s, a)).To(BeTrue(), "%s may %+v", name, a)
		}
		for _, a := range mayNot {
			g.Expect(allowed(g, ctx, s, a)).To(BeFalse(), "%s may not %+v", name, a)
		}
	}).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())
}

// resourceOf is the plural resource of gvk, as the API server serves it.
func resourceOf(g Gomega, gvk schema.GroupVersionKind) string {
	m, err := env.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	g.Expect(err).NotTo(HaveOccurred(), "%s", gvk)
	return m.Resource.Resource
}

// The namespaces of the tests: the release's, a tenant's it serves, another, and the
// stack manager's own (which the controller does not serve).
const sys, tenant, other, stacks = "tenancy-system", "tenancy-team", "tenancy-other", "tenancy-stacks"

// installRBAC creates the namespaces and the chart's RBAC, with runner Deployments (the
// chart's default), the stack manager in its own namespace and the tenant's namespace
// served, and returns its ClusterRoles by name.
func installRBAC(t *testing.T, g Gomega, ctx context.Context) map[string]*rbacv1.ClusterRole {
	for _, ns := range []string{sys, tenant, other, stacks} {
		g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	}
	return applyRBAC(g, ctx, sys, renderChart(t, g, "terraplane", "-n", sys, "--set=runners.mode=deployment", "--set=stackManager.enabled=true",
		"--set=stackManager.namespace="+stacks, "--set=tenancy.namespaces={"+tenant+"}"))
}

// renderChart runs helm template on the chart for release with args.
func renderChart(t *testing.T, g Gomega, release string, args ...string) string {
	out, err := helmTemplate(t, release, args...)
	g.Expect(err).NotTo(HaveOccurred(), "helm template")
	return out
}

// helmTemplate runs helm template on the chart for release with args, and returns its
// output, or its error with what it wrote on stderr.
func helmTemplate(t *testing.T, release string, args ...string) (string, error) {
	helm := filepath.Join(devenv.BinDir(), "helm")
	if _, err := os.Stat(helm); err != nil {
		t.Fatalf("helm is not installed in %s: run `make tools-test`", devenv.BinDir())
	}
	cmd := exec.Command(helm, append([]string{"template", release, "../../charts/terraplane"}, args...)...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(os.TempDir(), "terraplane-helm"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("helm template: %w: %s", err, stderr.String())
	}
	return string(out), nil
}

// applyRBAC creates the chart's ServiceAccounts, roles and bindings (in ns when they name
// no namespace), and returns its ClusterRoles by name.
func applyRBAC(g Gomega, ctx context.Context, ns, manifests string) map[string]*rbacv1.ClusterRole {
	roles := map[string]*rbacv1.ClusterRole{}
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			break
		}
		g.Expect(err).NotTo(HaveOccurred())
		if !slices.Contains([]string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}, u.GetKind()) {
			continue
		}
		if u.GetNamespace() == "" && !strings.HasPrefix(u.GetKind(), "Cluster") {
			u.SetNamespace(ns)
		}
		if u.GetKind() == "ClusterRole" {
			role := &rbacv1.ClusterRole{}
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role)).To(Succeed())
			roles[role.Name] = role
		}
		g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, u))).To(Succeed(), "%s %s", u.GetKind(), u.GetName())
	}
	return roles
}

// bind grants user ClusterRole role in namespace ns (cluster-wide when ns is empty).
func bind(g Gomega, ctx context.Context, user, role, ns string) {
	subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}
	var obj client.Object = &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user + "-" + role}, RoleRef: ref, Subjects: subjects}
	if ns != "" {
		obj = &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user + "-" + role}, RoleRef: ref, Subjects: subjects}
	}
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, obj))).To(Succeed())
}

// TestChartRoles applies the chart's RBAC, with runner Deployments, the stack manager and
// one tenant namespace, to the API server with the ClusterRole aggregation controller
// running, and asks the authorizer what each role allows: the controller reaches Secrets
// only in the namespaces it serves and has no CRD or RBAC rights, which only the stack
// manager holds; it makes runner Deployments where it serves, never in the stack
// manager's namespace (a Deployment there could run as the stack manager), and the chart
// refuses to put the stack manager where the controller serves; a claimer
// (or anyone with edit) writes claims and reads no Secret; a viewer writes nothing; an
// admin writes every Terraplane kind and reads no Secret either.
func TestChartRoles(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	roles := installRBAC(t, g, ctx)

	By(t, "the controller's ClusterRole grants no Secrets, CRDs or RBAC, and no escalate, bind or wildcard")
	manager := roles["terraplane-manager"]
	g.Expect(manager).NotTo(BeNil(), "the chart's manager ClusterRole")
	for _, r := range manager.Rules {
		g.Expect(r.Verbs).NotTo(ContainElement(BeElementOf("escalate", "bind", "impersonate", "*")), "%+v", r)
		g.Expect(r.APIGroups).NotTo(ContainElement(BeElementOf("apiextensions.k8s.io", "rbac.authorization.k8s.io", "*")), "%+v", r)
		g.Expect(r.Resources).NotTo(ContainElement(BeElementOf("secrets", "*/*")), "%+v", r)
	}
	claimKinds := kinds.NewRegistry(nil).ClaimKinds()
	g.Expect(claimKinds).NotTo(BeEmpty())
	bucket := resourceOf(g, claimKinds[0].GVK)
	controller := serviceAccount(sys, "terraplane")
	expectAccess(g, ctx, "the controller", controller, []access{
		{"get", "", "secrets", sys}, {"create", "", "secrets", tenant}, {"update", "", "secrets", tenant}, {"watch", "", "secrets", tenant},
		{"create", claimKinds[0].GVK.Group, bucket, tenant}, {"get", "", "configmaps", other},
	}, []access{
		{"get", "", "secrets", other}, {"get", "", "secrets", "kube-system"}, {"list", "", "secrets", ""},
		{"create", "apiextensions.k8s.io", "customresourcedefinitions", ""}, {"update", "apiextensions.k8s.io", "customresourcedefinitions", ""},
		{"create", "rbac.authorization.k8s.io", "clusterrolebindings", ""}, {"create", "rbac.authorization.k8s.io", "rolebindings", other},
		{"create", "apps", "deployments", stacks}, {"update", "apps", "deployments", stacks}, {"patch", "apps", "deployments", stacks},
		{"create", "", "pods", stacks}, {"create", "apps", "deployments", other},
	})
	expectAccess(g, ctx, "the controller's runner pools", controller, []access{
		{"create", "apps", "deployments", sys}, {"create", "apps", "deployments", tenant}, {"list", "apps", "deployments", tenant},
	}, nil)
	expectAccess(g, ctx, "the stack manager", serviceAccount(stacks, "terraplane-stack-manager"), []access{
		{"create", "apiextensions.k8s.io", "customresourcedefinitions", ""}, {"create", "rbac.authorization.k8s.io", "clusterroles", ""},
		{"create", "apps", "deployments", sys},
	}, nil)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: sys, Name: "terraplane-stack-manager"}, &corev1.ServiceAccount{})).
		To(MatchError(ContainSubstring("not found")), "no stack manager ServiceAccount where the controller makes Deployments")

	By(t, "the chart refuses the stack manager where the controller makes runner Deployments")
	for name, args := range map[string][]string{
		"the release's namespace": {"--set=stackManager.enabled=true"},
		"a served namespace":      {"--set=stackManager.enabled=true", "--set=stackManager.namespace=" + tenant, "--set=tenancy.namespaces={" + tenant + "}"},
		"every namespace served":  {"--set=stackManager.enabled=true", "--set=stackManager.namespace=" + stacks, "--set=tenancy.allNamespaces=true"},
	} {
		_, err := helmTemplate(t, "terraplane", append([]string{"-n", sys, "--set=runners.mode=deployment"}, args...)...)
		g.Expect(err).To(MatchError(ContainSubstring("stackManager.enabled with runners.mode=deployment")), name)
	}
	_, err := helmTemplate(t, "terraplane", "-n", sys, "--set=runners.mode=in-process", "--set=stackManager.enabled=true")
	g.Expect(err).NotTo(HaveOccurred(), "in-process, the controller makes no Deployment: the stack manager may share its namespace")

	By(t, "a claimer, and anyone with edit, writes every claim kind and reads no Secret")
	bind(g, ctx, "carol", "terraplane-claimer", tenant)
	bind(g, ctx, "ed", "edit", tenant)
	var claims, classes []access
	for _, k := range claimKinds {
		for _, verb := range []string{"create", "update", "delete", "get", "list", "watch"} {
			claims = append(claims, access{verb, k.GVK.Group, resourceOf(g, k.GVK), tenant})
		}
		classes = append(classes, access{"get", k.ClassGVK.Group, resourceOf(g, k.ClassGVK), tenant})
	}
	adminOnly := []access{
		{"create", "terraform.terraplane.io", "moduleclasses", tenant}, {"create", "terraform.terraplane.io", "modules", tenant},
		{"create", "terraform.terraplane.io", "providerconfigs", tenant}, {"create", "aws.terraplane.io", "providers", tenant},
		{"create", "storage.aws.terraplane.io", "s3bucketclasses", tenant}, {"create", "stacks.terraplane.io", "stackinstalls", tenant},
	}
	noSecrets := []access{{"get", "", "secrets", tenant}, {"list", "", "secrets", tenant}, {"watch", "", "secrets", tenant}}
	expectAccess(g, ctx, "a claimer", who{user: "carol"}, append(claims, classes...), slices.Concat(noSecrets, adminOnly,
		[]access{{"create", claimKinds[0].ClassGVK.Group, resourceOf(g, claimKinds[0].ClassGVK), tenant}, {"create", claimKinds[0].GVK.Group, bucket, other}}))
	expectAccess(g, ctx, "an editor", who{user: "ed"}, claims, adminOnly)

	By(t, "a viewer reads every Terraplane kind and writes none")
	bind(g, ctx, "vic", "terraplane-viewer", tenant)
	var reads, writes []access
	crds, err := crd.CRDs()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(crds)).To(BeNumerically(">", 40), "every Terraplane kind")
	for _, c := range crds {
		for _, verb := range []string{"get", "list", "watch"} {
			reads = append(reads, access{verb, c.Spec.Group, c.Spec.Names.Plural, tenant})
		}
		for _, verb := range []string{"create", "update", "patch", "delete"} {
			writes = append(writes, access{verb, c.Spec.Group, c.Spec.Names.Plural, tenant})
		}
	}
	expectAccess(g, ctx, "a viewer", who{user: "vic"}, reads, append(writes, noSecrets...))

	By(t, "an admin writes every Terraplane kind, and reads no Secret")
	bind(g, ctx, "ada", "terraplane-admin", "")
	expectAccess(g, ctx, "an admin", who{user: "ada"}, append(writes, adminOnly...), slices.Concat(noSecrets,
		[]access{{"create", "apiextensions.k8s.io", "customresourcedefinitions", ""}, {"create", "rbac.authorization.k8s.io", "rolebindings", tenant}}))
}

// By logs a step of a test.
func By(t *testing.T, step string) { t.Helper(); t.Log("STEP: " + step) }
