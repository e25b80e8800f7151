package install

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/engine"
)

// TestRuntimeEndpoints runs the controllers with secure metrics: /metrics answers only
// callers whose token the API server accepts and whose RBAC allows get on /metrics, and
// /readyz turns unready when the terraform binary disappears.
func TestRuntimeEndpoints(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	terraform, err := exec.LookPath("terraform")
	g.Expect(err).NotTo(HaveOccurred(), "terraform is not on PATH (make tools checks for it)")
	link := filepath.Join(t.TempDir(), "terraform")
	g.Expect(os.Symlink(terraform, link)).To(Succeed())
	metricsPort, err := devenv.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	healthPort, err := devenv.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	mgr, err := env.StartManager(t.TempDir(), app.Options{Engine: engine.Options{TerraformPath: link}, MetricsSecure: true,
		MetricsAddr: fmt.Sprintf("127.0.0.1:%d", metricsPort), HealthAddr: fmt.Sprintf("127.0.0.1:%d", healthPort)})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort)

	By(t, "ready once the caches have synced and terraform is there")
	g.Eventually(func() (int, error) { code, _, err := get(readyz, ""); return code, err }).
		WithTimeout(time.Minute).WithPolling(500 * time.Millisecond).Should(Equal(http.StatusOK))

	By(t, "metrics: 401 without a token, 403 for a ServiceAccount without the role, 200 with it")
	cs, err := kubernetes.NewForConfig(env.ControlPlane.Config)
	g.Expect(err).NotTo(HaveOccurred())
	const ns = "monitoring"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	allowed, denied := saToken(g, ctx, cs, ns, "prometheus"), saToken(g, ctx, cs, ns, "nosy")
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "test-metrics-reader"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "test-metrics-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "test-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "prometheus"}}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	metrics := fmt.Sprintf("https://127.0.0.1:%d/metrics", metricsPort)
	g.Eventually(func() (int, error) { code, _, err := get(metrics, ""); return code, err }).
		WithTimeout(30 * time.Second).Should(Equal(http.StatusUnauthorized))
	code, _, err := get(metrics, denied)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusForbidden))
	g.Eventually(func(g Gomega) {
		code, body, err := get(metrics, allowed)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusOK))
		g.Expect(body).To(ContainSubstring("terraplane_terraform_processes_total"))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	code, _, _ = get(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort), allowed)
	g.Expect(code).NotTo(Equal(http.StatusOK), "metrics are not served over plain HTTP")

	By(t, "unready when the terraform binary is gone")
	g.Expect(os.Remove(link)).To(Succeed())
	g.Eventually(func(g Gomega) {
		code, body, err := get(readyz+"?verbose", "")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusInternalServerError))
		g.Expect(body).To(ContainSubstring("[-]terraform failed"))
	}).WithTimeout(10 * time.Second).Should(Succeed())
}

// saToken creates a ServiceAccount and returns a token for it.
func saToken(g Gomega, ctx context.Context, cs kubernetes.Interface, ns, name string) string {
	_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
}

// get fetches url (skipping verification of the controller's self-signed certificate)
// with an optional bearer token.
func get(url, token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed test server
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}
