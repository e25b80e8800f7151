package install

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/test/framework"
)

// TestControllerRunsWithTheChartsRBAC runs the controller as the chart's ServiceAccount,
// holding only the roles the chart grants it, with the stack manager off and on. Each
// time the controller becomes ready, which needs every informer synced and so every list
// and watch allowed, and makes a Module Ready. The controller never grants RBAC; with the
// stack manager on, the stack manager's own ServiceAccount does.
func TestControllerRunsWithTheChartsRBAC(t *testing.T) {
	helm := tool(t, "helm", "make tools-test")
	for _, stacks := range []bool{false, true} {
		t.Run(fmt.Sprintf("stackManager=%v", stacks), func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			ns := fmt.Sprintf("rbac-stacks-%v", stacks)
			g.Expect(env.Namespace(ctx, ns)).To(Succeed())
			// the stack manager lives apart from where the controller makes runner Deployments
			g.Expect(env.Namespace(ctx, ns+"-sm")).To(Succeed())
			manifests := runTool(g, helm, "template", ns, chartDir, "-n", ns, fmt.Sprintf("--set=stackManager.enabled=%v", stacks),
				"--set=stackManager.namespace="+ns+"-sm", "--set=claimDefinitionGroups={platform.example.org}")
			applyManifests(g, manifests)
			sa := deployment(g, manifests).Spec.Template.Spec.ServiceAccountName
			cfg := rest.CopyConfig(env.ControlPlane.Config)
			cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + sa}

			as, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
			g.Expect(err).NotTo(HaveOccurred())
			grant := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-grant"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "somebody", Namespace: ns}}}
			err = as.Create(ctx, grant, client.DryRunAll)
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the controller cannot grant RBAC: %v", err)
			if stacks {
				smCfg := rest.CopyConfig(env.ControlPlane.Config)
				smName := regexp.MustCompile(`name: (\S+-stack-manager)\n`).FindStringSubmatch(manifests)
				g.Expect(smName).NotTo(BeNil(), "the chart names the stack manager's ServiceAccount")
				smCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + "-sm:" + smName[1]}
				sm, err := client.New(smCfg, client.Options{Scheme: env.Client.Scheme()})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(sm.Create(ctx, grant, client.DryRunAll)).To(Succeed(), "the stack manager grants a stack's controller its RBAC")
			}

			review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "platform.example.org", Resource: "networks", Verb: "watch", Namespace: "team-a"}}}
			g.Expect(as.Create(ctx, review)).To(Succeed())
			g.Expect(review.Status.Allowed).To(BeTrue(), "claimDefinitionGroups grants the claims of a defined group")

			healthPort, err := devenv.FreePort()
			g.Expect(err).NotTo(HaveOccurred())
			hook := chartWebhook(g, deployment(g, manifests).Spec.Template.Spec.Containers[0].Args)
			mgr, err := env.StartManagerAs(cfg, t.TempDir(), app.Options{DisableStackManager: true, SecretNamespaces: []string{ns}, MetricsAddr: "0",
				HealthAddr: fmt.Sprintf("127.0.0.1:%d", healthPort), PolicyWebhook: hook})
			g.Expect(err).NotTo(HaveOccurred())
			defer func() { _ = mgr.Stop() }()
			readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort)
			g.Eventually(func() (int, error) { code, _, err := get(readyz, ""); return code, err }).
				WithTimeout(time.Minute).WithPolling(500*time.Millisecond).Should(Equal(http.StatusOK), "every cache synced, and the webhook serves, under the chart's RBAC")
			vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: hook.Configuration}, vwc)).To(Succeed())
			g.Expect(vwc.Webhooks).To(HaveLen(1))
			g.Expect(string(vwc.Webhooks[0].ClientConfig.CABundle)).To(HavePrefix("-----BEGIN CERTIFICATE-----"), "the controller set the caBundle of the chart's configuration")

			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
				Data: map[string]string{"main.tf": `resource "terraform_data" "hello" { input = "hi" }` + "\n" + `output "said" { value = terraform_data.hello.output }`}}
			m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"}}
			m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: cm.Name}}
			m.Spec.ReclaimPolicy = common.ReclaimDelete
			g.Expect(env.Client.Create(ctx, cm)).To(Succeed())
			g.Expect(env.Client.Create(ctx, m)).To(Succeed())
			g.Eventually(func(g Gomega) {
				g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
				ready := framework.Condition(m.Status.Conditions, common.TypeReady)
				g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%v", m.Status.Conditions)
			}).WithTimeout(2 * time.Minute).Should(Succeed())
			g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
			g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)) }).
				WithTimeout(2*time.Minute).Should(BeTrue(), "destroyed and gone")
		})
	}
}

// chartWebhook is the policy webhook the chart's controller arguments configure, served
// on a free port of 127.0.0.1 rather than the pod's.
func chartWebhook(g Gomega, args []string) *app.WebhookOptions {
	flags := map[string]string{}
	for _, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--webhook-") {
			flags[k] = v
		}
	}
	g.Expect(args).To(ContainElement("--policy-webhook"), "the chart turns the policy webhook on")
	name := func(flag string) types.NamespacedName {
		ns, n, ok := strings.Cut(flags[flag], "/")
		g.Expect(ok).To(BeTrue(), "%s=%q", flag, flags[flag])
		return types.NamespacedName{Namespace: ns, Name: n}
	}
	port, err := devenv.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	return &app.WebhookOptions{Host: "127.0.0.1", Port: port, Secret: name("--webhook-secret"), Service: name("--webhook-service"),
		Configuration: flags["--webhook-configuration"]}
}
