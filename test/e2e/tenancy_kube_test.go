package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// kubeAdminNS holds the admin's ProviderConfig that reaches the control cluster as admin.
const kubeAdminNS = "e2e-tenancy-kube-admin"

// escalation is the ClusterRoleBinding a tenant would use to make herself cluster-admin.
func escalation(user string) workloadv1.Template {
	return object("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "kube-tenancy-"+user+"-admin", map[string]any{
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}},
	})
}

// canI asks the API server, as the tenant, whether she may do verb on resource in ns.
func canI(g Gomega, ctx context.Context, tenant *framework.Tenant, verb, group, resource, ns string) bool {
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource, Namespace: ns}}}
	g.Expect(tenant.Client.Create(ctx, review)).To(Succeed())
	return review.Status.Allowed
}

// expectConfined checks that the tenant still cannot make herself cluster-admin nor read
// the admin's Secrets, and that no escalating ClusterRoleBinding exists.
func expectConfined(g Gomega, ctx context.Context, tenant *framework.Tenant) {
	g.Expect(canI(g, ctx, tenant, "create", rbacv1.GroupName, "clusterrolebindings", "")).To(BeFalse(), "alice may create ClusterRoleBindings")
	g.Expect(canI(g, ctx, tenant, "get", "", "secrets", kubeAdminNS)).To(BeFalse(), "alice may read the admin's Secrets")
	g.Expect(canI(g, ctx, tenant, "get", "", "secrets", tenant.Namespace)).To(BeTrue(), "alice lost her own rights")
	err := env.Client.Get(ctx, types.NamespacedName{Name: "kube-tenancy-" + tenant.User + "-admin"}, &rbacv1.ClusterRoleBinding{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the escalating ClusterRoleBinding exists: %v", err)
}

// settledCondition waits until get returns a condition with a reason, and returns it.
func settledCondition(g Gomega, get func(g Gomega) metav1.Condition) metav1.Condition {
	var c metav1.Condition
	g.Eventually(func(g Gomega) {
		c = get(g)
		g.Expect(c.Reason).NotTo(BeEmpty())
	}).WithTimeout(timeout).Should(Succeed())
	return c
}

// resourceSynced is the Synced condition of an application resource.
func resourceSynced(ctx context.Context, ns, name string) func(g Gomega) metav1.Condition {
	return func(g Gomega) metav1.Condition {
		return framework.Condition(getResource(g, ctx, ns, name).Status.Conditions, common.TypeSynced)
	}
}

// providerConfigReady is the Ready condition of a kubernetes ProviderConfig.
func providerConfigReady(ctx context.Context, ns, name string) func(g Gomega) metav1.Condition {
	return func(g Gomega) metav1.Condition {
		pc := &kubernetesv1.ProviderConfig{}
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, pc)).To(Succeed())
		return framework.Condition(pc.Status.Conditions, common.TypeReady)
	}
}

// serviceAccountToken makes a ServiceAccount in ns and returns a token for it.
func serviceAccountToken(g Gomega, ctx context.Context, ns, name string) string {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, sa))).To(Succeed())
	tr := &authenticationv1.TokenRequest{}
	g.Expect(env.Client.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
	return tr.Status.Token
}

// controlKubeconfig is a kubeconfig for the control cluster whose user is user.
func controlKubeconfig(g Gomega, user *clientcmdapi.AuthInfo) []byte {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["control"] = &clientcmdapi.Cluster{Server: env.ControlPlane.Config.Host, CertificateAuthorityData: env.ControlPlane.Config.CAData}
	cfg.AuthInfos["tenant"] = user
	cfg.Contexts["control"] = &clientcmdapi.Context{Cluster: "control", AuthInfo: "tenant"}
	cfg.CurrentContext = "control"
	b, err := clientcmd.Write(*cfg)
	g.Expect(err).NotTo(HaveOccurred())
	return b
}

// TestTenancyKubernetes: a tenant (alice, rights in tenant-a only) cannot use the admin's
// kubernetes ProviderConfig, nor its credentials Secret, from her namespace unless the
// ProviderConfig consents; a kubeconfig that would run a command or read a file inside
// the controller is refused unless the controller runs with --allow-kubeconfig-exec; and
// alice's rights are unchanged afterwards.
func TestTenancyKubernetes(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, kubeAdminNS)).To(Succeed())
	alice, err := env.Tenant(ctx, "alice", "tenant-a")
	g.Expect(err).NotTo(HaveOccurred())
	tenant := alice.Namespace
	t.Cleanup(func() { // only if a refusal failed: never leave alice cluster-admin
		_ = env.Client.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "kube-tenancy-alice-admin"}})
	})
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = mgr.Stop() })
	expectConfined(g, ctx, alice)

	By(t, "the admin's ProviderConfig reaches the control cluster as cluster-admin")
	admin, err := os.ReadFile(env.ControlPlane.Kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(ctx, kubeconfigSecret(kubeAdminNS, "control-credentials", admin))).To(Succeed())
	control := providerConfig(kubeAdminNS, "control", "control-credentials")
	g.Expect(env.Client.Create(ctx, control)).To(Succeed())
	waitProviderConfig(g, ctx, control, metav1.ConditionTrue, common.ReasonReachable)

	By(t, "alice's application on the admin's ProviderConfig is refused, and nothing reaches the cluster")
	escalate := configMapApp(tenant, "escalate", &workloadv1.ProviderConfigReference{Name: "control", Namespace: kubeAdminNS}, "unused")
	escalate.Spec.ResourceTemplates[0].Spec.Template = escalation(alice.User)
	g.Expect(alice.Client.Create(ctx, escalate)).To(Succeed())
	sched := settledCondition(g, func(g Gomega) metav1.Condition {
		return framework.Condition(getApp(g, ctx, escalate).Status.Conditions, workloadv1.TypeScheduled)
	})
	g.Expect(sched.Reason).To(Equal(common.ReasonReferenceNotAllowed), "%+v", sched)
	g.Expect(sched.Message).To(ContainSubstring("spec.providerConfigRef"))

	By(t, "... and so is her resource naming that ProviderConfig directly")
	direct := &workloadv1.KubernetesApplicationResource{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "escalate-direct"}}
	direct.Spec.Template = escalation(alice.User)
	direct.Spec.TargetRef = &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig, Name: "control", Namespace: kubeAdminNS}
	g.Expect(alice.Client.Create(ctx, direct)).To(Succeed())
	synced := settledCondition(g, resourceSynced(ctx, tenant, direct.Name))
	g.Expect(synced.Reason).To(Equal(common.ReasonReferenceNotAllowed), "%+v", synced)
	g.Expect(synced.Message).To(ContainSubstring("spec.targetRef"))

	By(t, "alice's own ProviderConfig naming the admin's credentials Secret is refused")
	stolen := &kubernetesv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "stolen"},
		Spec: kubernetesv1.ProviderConfigSpec{CredentialsSecretRef: kubernetesv1.CredentialsSecretReference{Name: "control-credentials", Namespace: kubeAdminNS}}}
	g.Expect(alice.Client.Create(ctx, stolen)).To(Succeed())
	ready := settledCondition(g, providerConfigReady(ctx, tenant, "stolen"))
	g.Expect(ready.Reason).To(Equal(common.ReasonReferenceNotAllowed), "%+v", ready)
	g.Expect(ready.Message).To(ContainSubstring("spec.credentialsSecretRef"))
	viaStolen := &workloadv1.KubernetesApplicationResource{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "via-stolen"}}
	viaStolen.Spec.Template = object("v1", "ConfigMap", "kube-system", "kube-tenancy-stolen", nil)
	viaStolen.Spec.TargetRef = &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig, Name: "stolen"}
	g.Expect(alice.Client.Create(ctx, viaStolen)).To(Succeed())
	synced = settledCondition(g, resourceSynced(ctx, tenant, viaStolen.Name))
	g.Expect(synced.Reason).To(Equal(common.ReasonReferenceNotAllowed), "%+v", synced)

	By(t, "a kubeconfig that runs a command, or reads the controller's files, is refused and runs nothing")
	dir := t.TempDir()
	marker, creds := filepath.Join(dir, "exec-ran"), filepath.Join(dir, "credential.json")
	token := serviceAccountToken(g, ctx, tenant, "kube-tenancy")
	g.Expect(os.WriteFile(creds, []byte(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"`+token+`"}}`), 0o600)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "token"), []byte(token), 0o600)).To(Succeed())
	unsafe := map[string]*clientcmdapi.AuthInfo{
		"exec": {Exec: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "/bin/sh",
			Args: []string{"-c", "touch " + marker + " && cat " + creds}, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}},
		"tokenfile": {TokenFile: filepath.Join(dir, "token")},
	}
	for name, user := range unsafe {
		g.Expect(alice.Client.Create(ctx, kubeconfigSecret(tenant, name, controlKubeconfig(g, user)))).To(Succeed())
		g.Expect(alice.Client.Create(ctx, providerConfig(tenant, name, name))).To(Succeed())
	}
	for name, field := range map[string]string{"exec": "exec", "tokenfile": "tokenFile"} {
		ready := settledCondition(g, providerConfigReady(ctx, tenant, name))
		g.Expect(ready.Reason).To(Equal(common.ReasonUnsafeKubeconfig), "%s: %+v", name, ready)
		g.Expect(ready.Message).To(ContainSubstring(field))
		g.Expect(ready.Message).To(ContainSubstring("--allow-kubeconfig-exec"))
	}
	g.Consistently(func() bool {
		_, err := os.Stat(marker)
		return os.IsNotExist(err)
	}).WithTimeout(5*time.Second).Should(BeTrue(), "the kubeconfig's exec command ran inside the controller")

	By(t, "the refused objects go away without touching the cluster")
	for _, o := range []client.Object{escalate, direct, viaStolen} {
		g.Expect(alice.Client.Delete(ctx, o)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(escalate), escalate))).To(BeTrue())
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(direct), direct))).To(BeTrue())
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(viaStolen), viaStolen))).To(BeTrue())
	}).WithTimeout(timeout).Should(Succeed())
	err = env.Client.Get(ctx, types.NamespacedName{Namespace: "kube-system", Name: "kube-tenancy-stolen"}, &corev1.ConfigMap{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "alice wrote into kube-system: %v", err)
	expectConfined(g, ctx, alice)

	By(t, "with the admin's consent, alice's application on the admin's ProviderConfig works")
	g.Expect(updateLatest(ctx, control, func() {
		control.Spec.AllowedNamespaces = &common.AllowedNamespaces{Names: []string{tenant}}
	})).To(Succeed())
	allowed := configMapApp(tenant, "allowed", &workloadv1.ProviderConfigReference{Name: "control", Namespace: kubeAdminNS}, "kube-tenancy-allowed")
	allowed.Spec.ResourceTemplates[0].Spec.Template = object("v1", "ConfigMap", tenant, "kube-tenancy-allowed", nil)
	g.Expect(alice.Client.Create(ctx, allowed)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getApp(g, ctx, allowed).Status.State).To(Equal(workloadv1.ApplicationStateSubmitted))
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: tenant, Name: "kube-tenancy-allowed"}, &corev1.ConfigMap{})).To(Succeed())
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(alice.Client.Delete(ctx, allowed)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, types.NamespacedName{Namespace: tenant, Name: "kube-tenancy-allowed"}, &corev1.ConfigMap{}))
	}).WithTimeout(timeout).Should(BeTrue())

	By(t, "with --allow-kubeconfig-exec, the same kubeconfigs are used")
	g.Expect(mgr.Stop()).To(Succeed())
	mgr, err = env.StartManager(t.TempDir(), app.Options{AllowKubeconfigExec: true})
	g.Expect(err).NotTo(HaveOccurred())
	for name := range unsafe {
		g.Eventually(func(g Gomega) {
			ready := providerConfigReady(ctx, tenant, name)(g)
			g.Expect(ready.Reason).To(Equal(common.ReasonReachable), "%s: %+v", name, ready)
		}).WithTimeout(timeout).Should(Succeed())
	}
	_, err = os.Stat(marker)
	g.Expect(err).NotTo(HaveOccurred(), "the allowed exec command did not run")
	expectConfined(g, ctx, alice)
}
