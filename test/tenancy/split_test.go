package tenancy

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/test/framework"
)

// as is a rest config that impersonates s.
func as(s who) *rest.Config {
	cfg := rest.CopyConfig(env.ControlPlane.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: s.user, Groups: s.groups}
	return cfg
}

// TestStackManagerApart runs the controller and the stack manager each as its own
// ServiceAccount with only the chart's roles: both sync every cache they need, the stack
// manager turns a ClaimDefinition into CRDs and ClusterRoles, and the controller serves
// the defined kind through the role those aggregate into, which a claimer then holds too.
func TestStackManagerApart(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	installRBAC(t, g, ctx)

	By(t, "the stack manager and the controller start, each with its own ServiceAccount's rights")
	sm, err := app.NewStackManager(ctx, as(serviceAccount(stacks, "terraplane-stack-manager")), app.Options{WorkDir: t.TempDir(),
		UserErrorRetry: 2 * time.Second, MetricsAddr: "0", HealthAddr: "0"})
	g.Expect(err).NotTo(HaveOccurred())
	done := make(chan error, 1)
	go func() { done <- sm.Start(ctx) }()
	defer func() { cancel(); <-done }()
	port, err := devenv.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	mgr, err := env.StartManagerAs(as(serviceAccount(sys, "terraplane")), t.TempDir(), app.Options{DisableStackManager: true,
		SecretNamespaces: []string{sys, tenant}, MetricsAddr: "0", HealthAddr: fmt.Sprintf("127.0.0.1:%d", port)})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	g.Eventually(func() (int, error) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return resp.StatusCode, nil
	}).WithTimeout(time.Minute).WithPolling(500*time.Millisecond).Should(Equal(http.StatusOK), "every cache of the controller synced under its roles")

	By(t, "the stack manager defines a kind: its CRDs and ClusterRoles")
	def := &apiextv1.ClaimDefinition{ObjectMeta: metav1.ObjectMeta{Name: "queues.apart.example.org"},
		Spec: apiextv1.ClaimDefinitionSpec{Group: "apart.example.org", Names: apiextv1.ClaimDefinitionNames{Kind: "Queue", Plural: "queues"},
			Schema: &apiextensionsv1.JSON{Raw: []byte(`{"type": "object", "properties": {"size": {"type": "integer"}}}`)}}}
	g.Expect(env.Client.Create(ctx, def)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(def), def)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(def.Status.Conditions, apiextv1.TypeEstablished)).To(BeTrue(), "%+v", def.Status.Conditions)
		ready := framework.Condition(def.Status.Conditions, common.TypeReady)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%s: %s", ready.Reason, ready.Message)
	}).WithTimeout(time.Minute).Should(Succeed())
	for _, role := range []string{"claimer", "viewer", "admin", "manager"} {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "terraplane:" + def.Name + ":" + role}, &rbacv1.ClusterRole{})).To(Succeed(), role)
	}

	By(t, "a claimer may write claims of the kind, and the controller serves them")
	bind(g, ctx, "carol", "terraplane-claimer", tenant)
	expectAccess(g, ctx, "a claimer", who{user: "carol"}, []access{{"create", "apart.example.org", "queues", tenant}},
		[]access{{"create", "apart.example.org", "queueclasses", tenant}})
	expectAccess(g, ctx, "the controller", serviceAccount(sys, "terraplane"), []access{{"watch", "apart.example.org", "queues", ""},
		{"patch", "apart.example.org", "queues/status", tenant}}, []access{{"create", "apart.example.org", "queueclasses", tenant}})
	claim := &unstructured.Unstructured{}
	claim.SetGroupVersionKind(schema.GroupVersionKind{Group: "apart.example.org", Version: "v1alpha1", Kind: "Queue"})
	claim.SetNamespace(tenant)
	claim.SetName("orders")
	g.Expect(unstructured.SetNestedField(claim.Object, map[string]any{"size": int64(3)}, "spec", "parameters")).To(Succeed())
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		conds, _, _ := unstructured.NestedSlice(claim.Object, "status", "conditions")
		g.Expect(conds).NotTo(BeEmpty(), "the controller reconciled the claim and wrote its status")
	}).WithTimeout(time.Minute).Should(Succeed())

	By(t, "once its claim is gone, deleting the definition removes its kind")
	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim))
	}).
		WithTimeout(time.Minute).Should(BeTrue())
	g.Expect(env.Client.Delete(ctx, def)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: def.Name}, &apiextensionsv1.CustomResourceDefinition{}))
	}).WithTimeout(time.Minute).Should(BeTrue(), "the stack manager deleted the CRD")
}
