package install

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"terraplane.io/terraplane/internal/image"
)

// TestImageRunsAsPod runs the image as a pod on the node, under the restricted Pod
// Security level: `terraplane version` names the OpenTofu the default image bundles,
// which the image's TERRAPLANE_TERRAFORM makes the binary the controller runs.
func TestImageRunsAsPod(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	n := node(t)
	const ns = "node-version"
	g.Expect(n.Client.Create(ctx, restrictedNS(ns))).To(Succeed())
	g.Expect(n.Client.Create(ctx, restrictedPod(ns, "version", "", "version"))).To(Succeed())
	phase, log := n.podDone(g, ctx, ns, "version")
	g.Expect(phase).To(Equal(corev1.PodSucceeded), log)
	g.Expect(log).To(MatchRegexp(`(?m)^terraplane \S+.* go1\.\d+\S* linux/amd64$`))
	g.Expect(log).To(MatchRegexp(`(?m)^opentofu +1\.\d+\.\d+ \(/usr/local/bin/tofu\)$`))
}

// TestPodReachesAPIServer runs kubectl in a pod with no kubeconfig: it takes its in-cluster
// configuration (the kubernetes Service's address and its ServiceAccount's token), so the
// request goes through kube-proxy's rules to the API server, which answers as the
// ServiceAccount's RBAC allows.
func TestPodReachesAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	n := node(t)
	kubectl := tool(t, "kubectl", "make tools")
	work := t.TempDir()
	img, err := image.BuildStatic(kubectl, "/usr/local/bin/kubectl", image.UID, work)
	g.Expect(err).NotTo(HaveOccurred())
	tarball := filepath.Join(work, "kubectl.tar")
	g.Expect(image.WriteTarball(img, tarball, "terraplane.local/kubectl:test")).To(Succeed())
	g.Expect(n.ImportImage(ctx, tarball)).To(Succeed())
	g.Expect(os.Remove(tarball)).To(Succeed())

	const ns = "node-api"
	g.Expect(n.Client.Create(ctx, restrictedNS(ns))).To(Succeed())
	g.Expect(n.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"}})).To(Succeed())
	g.Expect(n.Client.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pods-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}})).To(Succeed())
	g.Expect(n.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pods-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "reader"}}})).To(Succeed())

	for _, tc := range []struct {
		pod, sa string
		args    []string
		phase   corev1.PodPhase
		logs    []string
	}{
		{"allowed", "reader", []string{"get", "pods", "-o", "name", "-v=6"}, corev1.PodSucceeded, []string{
			`Using in-cluster configuration`,
			`verb="GET" url="https://` + regexp.QuoteMeta(n.ServiceIP()) + `:443/api/v1/namespaces/` + ns + `/pods\?limit=500" status="200 OK"`,
			`(?m)^pod/allowed$`}},
		{"denied", "reader", []string{"get", "secrets"}, corev1.PodFailed, []string{
			`secrets is forbidden: User "system:serviceaccount:` + ns + `:reader" cannot list resource "secrets"`}},
	} {
		pod := restrictedPod(ns, tc.pod, tc.sa, tc.args...)
		pod.Spec.Containers[0].Image = "terraplane.local/kubectl:test"
		g.Expect(n.Client.Create(ctx, pod)).To(Succeed())
		phase, log := n.podDone(g, ctx, ns, tc.pod)
		g.Expect(phase).To(Equal(tc.phase), log)
		for _, re := range tc.logs {
			g.Expect(log).To(MatchRegexp(re), tc.pod)
		}
	}
}

// restrictedNS is a namespace that enforces the restricted Pod Security level.
func restrictedNS(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
}
