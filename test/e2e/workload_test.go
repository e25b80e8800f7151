package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	mysqldbv1 "terraplane.io/terraplane/apis/mysql/database/v1alpha1"
	mysqlv1 "terraplane.io/terraplane/apis/mysql/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/test/framework"
)

// remoteCluster is a second real etcd + kube-apiserver standing in for a target cluster.
type remoteCluster struct {
	cp     *devenv.ControlPlane
	client client.Client
	// kubeconfig is the admin kubeconfig's content.
	kubeconfig []byte
}

func startRemote(t *testing.T) *remoteCluster {
	t.Helper()
	g := NewWithT(t)
	cp, err := devenv.StartControlPlane(filepath.Join(t.TempDir(), "remote-kubeconfig"))
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(cp.Stop)
	c, err := client.New(cp.Config, client.Options{Scheme: kinds.NewScheme()})
	g.Expect(err).NotTo(HaveOccurred())
	kc, err := os.ReadFile(cp.Kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	return &remoteCluster{cp: cp, client: c, kubeconfig: kc}
}

func startWorkloadManager(t *testing.T) {
	t.Helper()
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = mgr.Stop() })
}

func kubeconfigSecret(ns, name string, kubeconfig []byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{"kubeconfig": kubeconfig}}
}

// boundCluster registers an existing cluster the way an admin does — its kubeconfig in
// a Secret, a ProviderConfig and a Cluster reserved for one claim — and binds the
// KubernetesCluster claim called name to it statically; it returns the claim once it is Bound and Ready with its
// connection Secret (<name>-connection) written.
func boundCluster(t *testing.T, ctx context.Context, ns, name string, labels map[string]string, kubeconfig []byte) *computev1.KubernetesCluster {
	t.Helper()
	g := NewWithT(t)
	g.Expect(env.Client.Create(ctx, kubeconfigSecret(ns, name+"-credentials", kubeconfig))).To(Succeed())
	g.Expect(env.Client.Create(ctx, providerConfig(ns, name, name+"-credentials"))).To(Succeed())
	cluster := &kubernetesv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	cluster.Spec.ProviderRef = &common.LocalReference{Name: name}
	cluster.Spec.WriteConnectionSecretToRef = &common.SecretReference{Name: "cluster-" + name}
	// Reserved for the claim, as an admin reserves a PersistentVolume for one claim.
	cluster.Spec.ClaimRef = &common.ObjectReference{Kind: "KubernetesCluster", Namespace: ns, Name: name}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	claim := &computev1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
	claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: name + "-connection"}
	claim.Spec.ResourceRef = &common.ObjectReference{APIVersion: kubernetesv1.GroupVersion.String(), Kind: "Cluster", Name: name, Namespace: ns}
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		g.Expect(claim.Status.BindingPhase).To(Equal(common.BindingPhaseBound))
		g.Expect(framework.Condition(claim.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name + "-connection"}, &corev1.Secret{})).To(Succeed())
	}).WithTimeout(timeout).Should(Succeed())
	return claim
}

func object(apiVersion, kind, ns, name string, fields map[string]any) workloadv1.Template {
	u := &unstructured.Unstructured{Object: fields}
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	u.SetNamespace(ns)
	t, err := workloadv1.TemplateFrom(u)
	if err != nil {
		panic(err)
	}
	return t
}

func resourceTemplate(name string, labels map[string]string, tmpl workloadv1.Template, secrets ...string) workloadv1.KubernetesApplicationResourceTemplate {
	rt := workloadv1.KubernetesApplicationResourceTemplate{Metadata: workloadv1.ResourceTemplateMetadata{Name: name, Labels: labels}}
	rt.Spec.Template = tmpl
	for _, s := range secrets {
		rt.Spec.Secrets = append(rt.Spec.Secrets, corev1.LocalObjectReference{Name: s})
	}
	return rt
}

func getApp(g Gomega, ctx context.Context, a *workloadv1.KubernetesApplication) *workloadv1.KubernetesApplication {
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
	return a
}

func getResource(g Gomega, ctx context.Context, ns, name string) *workloadv1.KubernetesApplicationResource {
	res := &workloadv1.KubernetesApplicationResource{}
	g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, res)).To(Succeed())
	return res
}

func remoteObject(ctx context.Context, c client.Client, apiVersion, kind, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u, c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, u)
}

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := devenv.Tool("kubectl")
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	out, err := exec.Command(bin, append([]string{"--kubeconfig", env.ControlPlane.Kubeconfig}, args...)...).CombinedOutput()
	NewWithT(t).Expect(err).NotTo(HaveOccurred(), string(out))
	return string(out)
}

// TestWorkloadWordPress submits the seed's WordPress application (Namespace, Deployment,
// Service and the connection Secret of a real MySQLInstance claim) to a second API server.
func TestWorkloadWordPress(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	remote := startRemote(t)
	db, err := framework.StartMariaDB(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	defer db.Stop()
	ns := "e2e-wordpress"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	startWorkloadManager(t)

	By(t, "a MySQL class and a KubernetesCluster claim for the remote cluster")
	dbObjects := mysqlObjects(ns, db)
	for _, o := range dbObjects {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	}
	boundCluster(t, ctx, ns, "remote", map[string]string{"env": "e2e"}, remote.kubeconfig)

	By(t, "the WordPress application from examples/workloads is scheduled and submitted")
	wordpress := &workloadv1.KubernetesApplication{}
	b, err := os.ReadFile("../../examples/workloads/wordpress.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(yaml.UnmarshalStrict(b, wordpress)).To(Succeed())
	wordpress.Namespace = ns
	g.Expect(env.Client.Create(ctx, wordpress)).To(Succeed())

	By(t, "without the database's Secret the Deployment waits; the rest is submitted")
	g.Eventually(func(g Gomega) {
		st := getApp(g, ctx, wordpress).Status
		g.Expect(st.State).To(Equal(workloadv1.ApplicationStatePartiallySubmitted))
		g.Expect([]int{st.DesiredResources, st.SubmittedResources}).To(Equal([]int{3, 2}))
		res := getResource(g, ctx, ns, "wordpress-deployment")
		g.Expect(res.Status.State).To(Equal(workloadv1.ResourceStatePending))
		ready := framework.Condition(res.Status.Conditions, common.TypeReady)
		g.Expect(ready.Reason).To(Equal("WaitingForSecret"))
		g.Expect(ready.Message).To(ContainSubstring("wordpress-mysql"))
	}).WithTimeout(timeout).Should(Succeed())
	_, err = remoteObject(ctx, remote.client, "apps/v1", "Deployment", "wordpress", "wordpress")
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Deployment before its Secret: %v", err)

	By(t, "the MySQLInstance claim binds; its connection Secret is propagated and the Deployment submitted")
	mysql := mysqlClaim(ns, "wordpress-mysql")
	g.Expect(env.Client.Create(ctx, mysql)).To(Succeed())
	g.Eventually(func(g Gomega) {
		st := getApp(g, ctx, wordpress).Status
		g.Expect(st.ClusterRef).NotTo(BeNil())
		g.Expect(st.ClusterRef.Name).To(Equal("remote"))
		g.Expect(st.State).To(Equal(workloadv1.ApplicationStateSubmitted), "%+v", st.Conditions)
		g.Expect(st.DesiredResources).To(Equal(3))
		g.Expect(st.SubmittedResources).To(Equal(3))
	}).WithTimeout(timeout).Should(Succeed())
	waitClaimReady(g, ctx, mysql)

	By(t, "the remote cluster holds the objects, marked with their resource's UID, and the DB Secret")
	for _, o := range []struct{ apiVersion, kind, ns, name, resource string }{
		{"v1", "Namespace", "", "wordpress", "wordpress-namespace"},
		{"apps/v1", "Deployment", "wordpress", "wordpress", "wordpress-deployment"},
		{"v1", "Service", "wordpress", "wordpress", "wordpress-service"},
	} {
		u, err := remoteObject(ctx, remote.client, o.apiVersion, o.kind, o.ns, o.name)
		g.Expect(err).NotTo(HaveOccurred(), o.kind)
		res := getResource(g, ctx, ns, o.resource)
		g.Expect(u.GetAnnotations()).To(HaveKeyWithValue(common.RemoteOwnerAnnotation, string(res.UID)))
		g.Expect(res.Status.ClusterRef.Name).To(Equal("remote"))
	}
	local := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "wordpress-mysql"}, local)).To(Succeed())
	propagated := &corev1.Secret{}
	g.Eventually(func() error {
		return remote.client.Get(ctx, types.NamespacedName{Namespace: "wordpress", Name: "wordpress-deployment-wordpress-mysql"}, propagated)
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(propagated.Data).To(Equal(local.Data))
	g.Expect(propagated.Data).To(HaveKey("password"))

	By(t, "status.remote is the remote object's .status, verbatim")
	g.Eventually(func(g Gomega) {
		res := getResource(g, ctx, ns, "wordpress-namespace")
		g.Expect(res.Status.Remote).NotTo(BeNil())
		u, err := remoteObject(ctx, remote.client, "v1", "Namespace", "", "wordpress")
		g.Expect(err).NotTo(HaveOccurred())
		want, err := json.Marshal(u.Object["status"])
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Status.Remote.Raw).To(MatchJSON(want))
		g.Expect(string(want)).To(ContainSubstring(`"phase":"Active"`))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "kubectl get shows the application and its resources")
	out := kubectl(t, "get", "kubernetesapplication", "-n", ns)
	g.Expect(strings.Fields(strings.Split(out, "\n")[0])).To(Equal([]string{"NAME", "CLUSTER", "STATUS", "DESIRED", "SUBMITTED", "AGE"}))
	g.Expect(strings.Fields(strings.Split(out, "\n")[1])[:5]).To(Equal([]string{"wordpress", "remote", "Submitted", "3", "3"}))
	out = kubectl(t, "get", "kubernetesapplicationresource", "-n", ns, "wordpress-deployment")
	g.Expect(strings.Fields(strings.Split(out, "\n")[0])).To(Equal([]string{"NAME", "TEMPLATE-KIND", "TEMPLATE-NAME", "CLUSTER", "STATUS", "AGE"}))
	g.Expect(strings.Fields(strings.Split(out, "\n")[1])[:5]).To(Equal([]string{"wordpress-deployment", "Deployment", "wordpress", "remote", "Submitted"}))
	out = kubectl(t, "get", "kubernetesapplicationresource", "-n", ns, "wordpress-service", "-o", "jsonpath={.status.remote}")
	g.Expect(out).To(ContainSubstring("loadBalancer"))

	By(t, "a second resource templating the same remote Service is refused and leaves it alone")
	svc, err := remoteObject(ctx, remote.client, "v1", "Service", "wordpress", "wordpress")
	g.Expect(err).NotTo(HaveOccurred())
	intruder := &workloadv1.KubernetesApplicationResource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "intruder"}}
	intruder.Spec.Template = object("v1", "Service", "wordpress", "wordpress", map[string]any{
		"spec": map[string]any{"ports": []any{map[string]any{"port": int64(8080)}}}})
	intruder.Spec.TargetRef = &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindClaim, Name: "remote"}
	g.Expect(env.Client.Create(ctx, intruder)).To(Succeed())
	g.Eventually(func(g Gomega) {
		res := getResource(g, ctx, ns, "intruder")
		g.Expect(res.Status.State).To(Equal(workloadv1.ResourceStateFailed))
		synced := framework.Condition(res.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Reason).To(Equal("RemoteObjectConflict"))
		g.Expect(synced.Message).To(ContainSubstring("belongs to another Terraplane object (UID"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		now, err := remoteObject(ctx, remote.client, "v1", "Service", "wordpress", "wordpress")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(now.GetResourceVersion()).To(Equal(svc.GetResourceVersion()))
		g.Expect(getApp(g, ctx, wordpress).Status.State).To(Equal(workloadv1.ApplicationStateSubmitted))
	}).WithTimeout(5 * time.Second).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, intruder)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(intruder), intruder))
	}).WithTimeout(timeout).Should(BeTrue())
	_, err = remoteObject(ctx, remote.client, "v1", "Service", "wordpress", "wordpress")
	g.Expect(err).NotTo(HaveOccurred(), "deleting the refused resource must not delete the object it does not own")

	By(t, "removing the Service template deletes its resource and the remote Service")
	g.Eventually(func(g Gomega) {
		getApp(g, ctx, wordpress)
		var keep []workloadv1.KubernetesApplicationResourceTemplate
		for _, rt := range wordpress.Spec.ResourceTemplates {
			if rt.Metadata.Name != "wordpress-service" {
				keep = append(keep, rt)
			}
		}
		wordpress.Spec.ResourceTemplates = keep
		g.Expect(env.Client.Update(ctx, wordpress)).To(Succeed())
	}).WithTimeout(timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		_, err := remoteObject(ctx, remote.client, "v1", "Service", "wordpress", "wordpress")
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "remote Service: %v", err)
		err = env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "wordpress-service"}, &workloadv1.KubernetesApplicationResource{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
		st := getApp(g, ctx, wordpress).Status
		g.Expect([]int{st.DesiredResources, st.SubmittedResources}).To(Equal([]int{2, 2}))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "deleting the application cleans the remote cluster")
	g.Expect(env.Client.Delete(ctx, wordpress)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(wordpress), &workloadv1.KubernetesApplication{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
		list := &workloadv1.KubernetesApplicationResourceList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).To(BeEmpty())
	}).WithTimeout(timeout).Should(Succeed())
	_, err = remoteObject(ctx, remote.client, "apps/v1", "Deployment", "wordpress", "wordpress")
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Deployment: %v", err)
	err = remote.client.Get(ctx, types.NamespacedName{Namespace: "wordpress", Name: "wordpress-deployment-wordpress-mysql"}, &corev1.Secret{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "propagated Secret: %v", err)
	// The remote cluster runs no namespace controller, so a deleted Namespace stays Terminating.
	remoteNS := &corev1.Namespace{}
	g.Expect(remote.client.Get(ctx, types.NamespacedName{Name: "wordpress"}, remoteNS)).To(Succeed())
	g.Expect(remoteNS.DeletionTimestamp).NotTo(BeNil())

	g.Expect(env.Client.Delete(ctx, mysql)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(mysql), mysql))
	}).WithTimeout(timeout).Should(BeTrue())
}

// mysqlObjects are an admin's MariaDB Provider and DatabaseClass plus the namespace's
// default MySQLInstanceClass.
func mysqlObjects(ns string, s *framework.Server) []client.Object {
	provider := &mysqlv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "wordpress-mariadb"},
		Spec: mysqlv1.ProviderSpec{Host: s.Host, Port: int32(s.Port), CredentialsSecretRef: mysqlv1.CredentialsSecretReference{Name: "wordpress-mariadb-admin"}}}
	class := &mysqldbv1.DatabaseClass{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "wordpress-mysql"},
		AllowedNamespaces: framework.Allow(ns),
		SpecTemplate: mysqldbv1.DatabaseClassSpecTemplate{
			ClassSpecTemplate: common.ClassSpecTemplate{ProviderRef: &common.LocalReference{Name: "wordpress-mariadb"}, ReclaimPolicy: common.ReclaimDelete},
			ForProvider:       mysqldbv1.DatabaseParameters{EngineVersion: "10.11"}}}
	portable := &databasev1.MySQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "standard", Labels: map[string]string{common.DefaultClassLabel: "true"}},
		ClassRef: common.ClassReference{APIVersion: "database.mysql.terraplane.io/v1alpha1", Kind: "DatabaseClass", Name: "wordpress-mysql", Namespace: adminNS}}
	return []client.Object{adminSecret(adminNS, "wordpress-mariadb-admin", s), provider, class, portable}
}

func mysqlClaim(ns, name string) *databasev1.MySQLInstance {
	c := &databasev1.MySQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	c.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: name}
	return c
}

func providerConfig(ns, name, secret string) *kubernetesv1.ProviderConfig {
	return &kubernetesv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kubernetesv1.ProviderConfigSpec{CredentialsSecretRef: kubernetesv1.CredentialsSecretReference{Name: secret}}}
}

func waitProviderConfig(g Gomega, ctx context.Context, pc *kubernetesv1.ProviderConfig, status metav1.ConditionStatus, reason string) metav1.Condition {
	var ready metav1.Condition
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pc), pc)).To(Succeed())
		ready = framework.Condition(pc.Status.Conditions, common.TypeReady)
		g.Expect(ready.Status).To(Equal(status), "%+v", ready)
		g.Expect(ready.Reason).To(Equal(reason), "%+v", ready)
	}).WithTimeout(timeout).Should(Succeed())
	return ready
}

func configMapApp(ns, name string, pc *workloadv1.ProviderConfigReference, cmName string) *workloadv1.KubernetesApplication {
	labels := map[string]string{"app": name}
	a := &workloadv1.KubernetesApplication{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	a.Spec.ProviderConfigRef = pc
	a.Spec.ResourceSelector = &metav1.LabelSelector{MatchLabels: labels}
	a.Spec.ResourceTemplates = []workloadv1.KubernetesApplicationResourceTemplate{
		resourceTemplate(name+"-config", labels, object("v1", "ConfigMap", "default", cmName, map[string]any{"data": map[string]any{"app": name}})),
	}
	return a
}

// TestKubernetesProviderConfig reaches clusters through ProviderConfigs in every
// credentials format, rebuilds clients when a Secret changes, and shows that an
// unreachable cluster neither blocks nor hides other applications.
func TestKubernetesProviderConfig(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	remote := startRemote(t)
	ns := "e2e-providerconfig"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	startWorkloadManager(t)

	By(t, "a kubeconfig Secret")
	g.Expect(env.Client.Create(ctx, kubeconfigSecret(ns, "remote-kubeconfig", remote.kubeconfig))).To(Succeed())
	byKubeconfig := providerConfig(ns, "remote", "remote-kubeconfig")
	g.Expect(env.Client.Create(ctx, byKubeconfig)).To(Succeed())
	ready := waitProviderConfig(g, ctx, byKubeconfig, metav1.ConditionTrue, common.ReasonReachable)
	g.Expect(ready.Message).To(ContainSubstring("Kubernetes v1."))
	g.Expect(strings.TrimSuffix(byKubeconfig.Status.Endpoint, "/")).To(Equal(strings.TrimSuffix(remote.cp.Config.Host, "/")))

	By(t, "the fields endpoint, clusterCA, clientCert and clientKey of a hand-made Secret")
	cfg := remote.cp.Config
	fields := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "remote-fields"}, Data: map[string][]byte{
		"endpoint": []byte(cfg.Host), "clusterCA": cfg.CAData, "clientCert": cfg.CertData, "clientKey": cfg.KeyData}}
	g.Expect(env.Client.Create(ctx, fields)).To(Succeed())
	byFields := providerConfig(ns, "remote-fields", "remote-fields")
	g.Expect(env.Client.Create(ctx, byFields)).To(Succeed())
	waitProviderConfig(g, ctx, byFields, metav1.ConditionTrue, common.ReasonReachable)

	By(t, "the control cluster itself through a ServiceAccount token")
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "terraplane-self"}}
	g.Expect(env.Client.Create(ctx, sa)).To(Succeed())
	tr := &authenticationv1.TokenRequest{}
	g.Expect(env.Client.SubResource("token").Create(ctx, sa, tr)).To(Succeed())
	g.Expect(tr.Status.Token).NotTo(BeEmpty())
	self := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "self-token"}, Data: map[string][]byte{
		"token": []byte(tr.Status.Token), "ca.crt": env.ControlPlane.Config.CAData}}
	g.Expect(env.Client.Create(ctx, self)).To(Succeed())
	bySA := providerConfig(ns, "self", "self-token")
	g.Expect(env.Client.Create(ctx, bySA)).To(Succeed())
	waitProviderConfig(g, ctx, bySA, metav1.ConditionTrue, common.ReasonReachable)
	g.Expect(strings.TrimSuffix(bySA.Status.Endpoint, "/")).To(Equal(strings.TrimSuffix(env.ControlPlane.Config.Host, "/")))

	By(t, "a missing Secret is a condition that clears when the Secret appears")
	late := providerConfig(ns, "late", "late-kubeconfig")
	g.Expect(env.Client.Create(ctx, late)).To(Succeed())
	ready = waitProviderConfig(g, ctx, late, metav1.ConditionFalse, "CredentialsNotFound")
	g.Expect(ready.Message).To(ContainSubstring("late-kubeconfig"))
	g.Expect(env.Client.Create(ctx, kubeconfigSecret(ns, "late-kubeconfig", remote.kubeconfig))).To(Succeed())
	waitProviderConfig(g, ctx, late, metav1.ConditionTrue, common.ReasonReachable)

	By(t, "the client is rebuilt when the Secret changes: pointing it at a dead endpoint makes it unreachable")
	g.Expect(updateLatest(ctx, fields, func() {
		fields.Data["endpoint"] = []byte("https://127.0.0.1:1")
	})).To(Succeed())
	ready = waitProviderConfig(g, ctx, byFields, metav1.ConditionFalse, common.ReasonClusterUnreachable)
	g.Expect(ready.Message).To(ContainSubstring("127.0.0.1:1"))
	g.Expect(ready.Message).NotTo(ContainSubstring("BEGIN"), "no credentials in conditions")

	By(t, "an application on the unreachable cluster does not block one on the reachable cluster")
	stuck := configMapApp(ns, "stuck", &workloadv1.ProviderConfigReference{Name: "remote-fields"}, "stuck")
	g.Expect(env.Client.Create(ctx, stuck)).To(Succeed())
	ok := configMapApp(ns, "ok", &workloadv1.ProviderConfigReference{Name: "remote", Namespace: ns}, "ok")
	g.Expect(env.Client.Create(ctx, ok)).To(Succeed())
	g.Eventually(func(g Gomega) {
		st := getApp(g, ctx, ok).Status
		g.Expect(st.State).To(Equal(workloadv1.ApplicationStateSubmitted))
		g.Expect(st.ClusterRef).To(Equal(&workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig, Name: "remote", Namespace: ns}))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	_, err := remoteObject(ctx, remote.client, "v1", "ConfigMap", "default", "ok")
	g.Expect(err).NotTo(HaveOccurred())

	By(t, "a propagated Secret follows its local Secret")
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"},
		Data: map[string][]byte{"color": []byte("blue")}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		getApp(g, ctx, ok)
		ok.Spec.ResourceTemplates[0].Spec.Secrets = []corev1.LocalObjectReference{{Name: "settings"}}
		g.Expect(env.Client.Update(ctx, ok)).To(Succeed())
	}).WithTimeout(timeout).Should(Succeed())
	remoteSecret := func(g Gomega) string {
		s := &corev1.Secret{}
		g.Expect(remote.client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "ok-config-settings"}, s)).To(Succeed())
		return string(s.Data["color"])
	}
	g.Eventually(remoteSecret).WithTimeout(timeout).Should(Equal("blue"))
	settings := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "settings"}, settings)).To(Succeed())
	settings.Data["color"] = []byte("green")
	g.Expect(env.Client.Update(ctx, settings)).To(Succeed())
	g.Eventually(remoteSecret).WithTimeout(timeout).Should(Equal("green"))
	g.Eventually(func(g Gomega) {
		st := getApp(g, ctx, stuck).Status // never placed on a cluster that cannot be reached
		g.Expect(st.State).To(Equal(workloadv1.ApplicationStatePending))
		g.Expect(framework.Condition(st.Conditions, workloadv1.TypeScheduled).Message).To(
			ContainSubstring("ClusterUnusable: providerconfigs.kubernetes.terraplane.io e2e-providerconfig/remote-fields cannot reach its cluster: " + common.ReasonClusterUnreachable))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "when the Secret is fixed the stuck application is submitted")
	g.Expect(updateLatest(ctx, fields, func() {
		fields.Data["endpoint"] = []byte(cfg.Host)
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getApp(g, ctx, stuck).Status.State).To(Equal(workloadv1.ApplicationStateSubmitted))
	}).WithTimeout(timeout).Should(Succeed())
	_, err = remoteObject(ctx, remote.client, "v1", "ConfigMap", "default", "stuck")
	g.Expect(err).NotTo(HaveOccurred())

	By(t, "a kind the remote cluster does not serve fails with an actionable condition")
	unknown := configMapApp(ns, "unknown", &workloadv1.ProviderConfigReference{Name: "remote"}, "x")
	unknown.Spec.ResourceTemplates[0].Spec.Template = object("example.com/v1", "Widget", "", "w", map[string]any{"spec": map[string]any{"size": int64(1)}})
	g.Expect(env.Client.Create(ctx, unknown)).To(Succeed())
	g.Eventually(func(g Gomega) {
		res := getResource(g, ctx, ns, "unknown-config")
		g.Expect(res.Status.State).To(Equal(workloadv1.ResourceStateFailed))
		synced := framework.Condition(res.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Reason).To(Equal("UnknownKind"))
		g.Expect(synced.Message).To(ContainSubstring("install its CRD there"))
		g.Expect(getApp(g, ctx, unknown).Status.State).To(Equal(workloadv1.ApplicationStateFailed))
	}).WithTimeout(timeout).Should(Succeed())
	events, err := env.Events(ctx, getResource(g, ctx, ns, "unknown-config"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(events).To(HaveLen(1), "one event per distinct problem")

	By(t, "a namespaced kind without a namespace is refused with what to do")
	nons := configMapApp(ns, "nons", &workloadv1.ProviderConfigReference{Name: "remote"}, "x")
	nons.Spec.ResourceTemplates[0].Spec.Template = object("v1", "ConfigMap", "", "nons", nil)
	g.Expect(env.Client.Create(ctx, nons)).To(Succeed())
	g.Eventually(func(g Gomega) {
		synced := framework.Condition(getResource(g, ctx, ns, "nons-config").Status.Conditions, common.TypeSynced)
		g.Expect(synced.Reason).To(Equal("NamespaceRequired"))
		g.Expect(synced.Message).To(ContainSubstring("set metadata.namespace of nons"))
	}).WithTimeout(timeout).Should(Succeed())

	for _, a := range []*workloadv1.KubernetesApplication{stuck, ok, unknown, nons} {
		g.Expect(env.Client.Delete(ctx, a)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		list := &workloadv1.KubernetesApplicationList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).To(BeEmpty())
	}).WithTimeout(timeout).Should(Succeed())
	_, err = remoteObject(ctx, remote.client, "v1", "ConfigMap", "default", "ok")
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	_, err = remoteObject(ctx, remote.client, "v1", "Secret", "default", "ok-config-settings")
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
}

// TestWorkloadImmutability: the API server refuses changes to an application's
// clusterSelector and to a resource template's apiVersion, kind, name and namespace.
func TestWorkloadImmutability(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-immutable"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())

	a := emptyApp(ns, "fixed", map[string]string{"env": "prod"})
	g.Expect(env.Client.Create(ctx, a)).To(Succeed())
	a.Spec.ClusterSelector.MatchLabels["env"] = "dev"
	err := env.Client.Update(ctx, a)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("clusterSelector is immutable"))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
	a.Spec.ClusterSelector = nil
	err = env.Client.Update(ctx, a)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("clusterSelector is immutable"))

	res := &workloadv1.KubernetesApplicationResource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}
	res.Spec.Template = object("v1", "ConfigMap", "default", "cm", map[string]any{"data": map[string]any{"k": "v"}})
	g.Expect(env.Client.Create(ctx, res)).To(Succeed())
	for _, c := range []struct {
		change func(u *unstructured.Unstructured)
		msg    string
	}{
		{func(u *unstructured.Unstructured) { u.SetAPIVersion("v2") }, "template apiVersion is immutable"},
		{func(u *unstructured.Unstructured) { u.SetKind("Secret") }, "template kind is immutable"},
		{func(u *unstructured.Unstructured) { u.SetName("other") }, "template metadata.name is immutable"},
		{func(u *unstructured.Unstructured) { u.SetNamespace("kube-system") }, "template metadata.namespace is immutable"},
		{func(u *unstructured.Unstructured) { u.SetNamespace("") }, "template metadata.namespace is immutable"},
	} {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(res), res)).To(Succeed())
		u, err := res.Spec.Template.Object()
		g.Expect(err).NotTo(HaveOccurred())
		c.change(u)
		res.Spec.Template, err = workloadv1.TemplateFrom(u)
		g.Expect(err).NotTo(HaveOccurred())
		err = env.Client.Update(ctx, res)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: %v", c.msg, err)
		g.Expect(err.Error()).To(ContainSubstring(c.msg))
	}

	By(t, "other template fields may change")
	g.Expect(updateLatest(ctx, res, func() {
		res.Spec.Template = object("v1", "ConfigMap", "default", "cm", map[string]any{"data": map[string]any{"k": "changed"}})
	})).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(res), res)).To(Succeed())
	u, err := res.Spec.Template.Object()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(u.Object["data"]).To(Equal(map[string]any{"k": "changed"}))

	By(t, "targetRef cannot move once set")
	res.Spec.TargetRef = &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig, Name: "one"}
	g.Expect(env.Client.Update(ctx, res)).To(Succeed())
	res.Spec.TargetRef.Name = "two"
	err = env.Client.Update(ctx, res)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("targetRef is immutable once set"))
	g.Expect(env.Client.Delete(ctx, res)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, a)).To(Succeed())

	By(t, "a kubernetes Object's manifest kind cannot change")
	o := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "obj"}}
	o.Spec.ProviderRef = &common.LocalReference{Name: "any"}
	o.Spec.ForProvider.Manifest = object("v1", "ConfigMap", "default", "cm", nil)
	g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	o.Spec.ForProvider.Manifest = object("v1", "Secret", "default", "cm", nil)
	err = env.Client.Update(ctx, o)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("manifest apiVersion, kind and name are immutable"))
	g.Expect(env.Client.Delete(ctx, o)).To(Succeed())
}
