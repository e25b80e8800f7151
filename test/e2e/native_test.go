package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/test/framework"
)

// installCockroachCRD installs the Rook-style CockroachDB Cluster CRD and the namespace
// rook in the remote cluster only, playing the operator's installation.
func installCockroachCRD(t *testing.T, ctx context.Context, remote *remoteCluster) {
	t.Helper()
	g := NewWithT(t)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	b, err := os.ReadFile("testdata/workload/cockroachdb-crd.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(yaml.UnmarshalStrict(b, crd)).To(Succeed())
	g.Expect(remote.client.Create(ctx, crd)).To(Succeed())
	g.Expect(remote.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rook"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("cockroachdb.rook.io/v1alpha1")
		list.SetKind("ClusterList")
		g.Expect(remote.client.List(ctx, list)).To(Succeed())
	}).WithTimeout(timeout).Should(Succeed())
}

// TestKubernetesNativeObject manages a Rook-style CockroachDB Cluster in a remote cluster
// as an external resource: the CRD exists only there, the test plays the operator that
// fills the Cluster's status and credentials Secret, and the connection Secret in the
// control cluster is read from both.
func TestKubernetesNativeObject(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	remote := startRemote(t)
	ns := "e2e-native"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())

	By(t, "the CRD and a namespace exist only in the remote cluster")
	installCockroachCRD(t, ctx, remote)
	g.Expect(env.Client.Create(ctx, kubeconfigSecret(ns, "rook-kubeconfig", remote.kubeconfig))).To(Succeed())
	g.Expect(env.Client.Create(ctx, providerConfig(ns, "rook", "rook-kubeconfig"))).To(Succeed())
	startWorkloadManager(t)

	By(t, "an admin creates an Object templating a CockroachDB Cluster")
	o := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cockroach"}}
	o.Spec.ProviderRef = &common.LocalReference{Name: "rook"}
	o.Spec.WriteConnectionSecretToRef = &common.SecretReference{Name: "cockroach-conn"}
	o.Spec.ForProvider.Manifest = object("cockroachdb.rook.io/v1alpha1", "Cluster", "rook", "db", map[string]any{
		"spec": map[string]any{"scope": map[string]any{"nodeCount": int64(3)}}})
	o.Spec.ForProvider.ConnectionDetails = []kubernetesv1.ConnectionDetail{
		{Key: "endpoint", FieldPath: "status.endpoint"},
		{Key: "port", FieldPath: "status.port"},
		{Key: "password", FromSecret: &kubernetesv1.RemoteSecretKeySelector{NameFieldPath: "status.credentialsSecret", Key: "password"}},
	}
	g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	var cluster *unstructured.Unstructured
	var err error
	g.Eventually(func() error {
		cluster, err = remoteObject(ctx, remote.client, "cockroachdb.rook.io/v1alpha1", "Cluster", "rook", "db")
		return err
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(cluster.GetAnnotations()).To(HaveKeyWithValue(common.RemoteOwnerAnnotation, string(o.UID)))
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
		ready := framework.Condition(o.Status.Conditions, common.TypeReady)
		g.Expect(ready.Reason).To(Equal("WaitingForConnectionDetails"))
		g.Expect(ready.Message).To(ContainSubstring("status.endpoint"))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "the operator reports the endpoint and names a credentials Secret")
	operatorReports(t, ctx, remote, "db", "db-public.rook.svc", "cockroach-root-pw")
	conn := &corev1.Secret{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
		g.Expect(framework.Condition(o.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "cockroach-conn"}, conn)).To(Succeed())
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(conn.Data).To(Equal(map[string][]byte{"endpoint": []byte("db-public.rook.svc"), "port": []byte("26257"), "password": []byte("cockroach-root-pw")}))
	g.Expect(o.Status.AtProvider.Raw).To(MatchJSON(`{"endpoint":"db-public.rook.svc","port":26257,"credentialsSecret":"db-root"}`))
	g.Expect(string(o.Status.AtProvider.Raw)).NotTo(ContainSubstring("cockroach-root-pw"))

	By(t, "deleting the Object (reclaimPolicy Delete) deletes the remote Cluster and the connection Secret")
	g.Expect(env.Client.Delete(ctx, o)).To(Succeed())
	g.Eventually(func(g Gomega) {
		_, err := remoteObject(ctx, remote.client, "cockroachdb.rook.io/v1alpha1", "Cluster", "rook", "db")
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o))).To(BeTrue())
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(conn), conn))).To(BeTrue())
	}).WithTimeout(timeout).Should(Succeed())
	By(t, "reclaimPolicy Retain keeps the remote object")
	kept := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kept"}}
	kept.Spec.ProviderRef = &common.LocalReference{Name: "rook"}
	kept.Spec.ReclaimPolicy = common.ReclaimRetain
	kept.Spec.ForProvider.Manifest = object("cockroachdb.rook.io/v1alpha1", "Cluster", "rook", "kept", map[string]any{"spec": map[string]any{}})
	g.Expect(env.Client.Create(ctx, kept)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(kept), kept)).To(Succeed())
		g.Expect(framework.Condition(kept.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, kept)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(kept), kept))
	}).WithTimeout(timeout).Should(BeTrue())
	_, err = remoteObject(ctx, remote.client, "cockroachdb.rook.io/v1alpha1", "Cluster", "rook", "kept")
	g.Expect(err).NotTo(HaveOccurred(), "a retained object stays in the remote cluster")
}

// cockroachClass is an ObjectClass whose Objects are CockroachDB Clusters in namespace
// rook of the cluster ProviderConfig pc reaches: storageGB and engineVersion of the claim
// and the region label of the chosen cluster are patched in; endpoint, port and password
// come from the Cluster's status and the Secret it names.
func cockroachClass(ns, name, pc string) *kubernetesv1.ObjectClass {
	c := &kubernetesv1.ObjectClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	c.SpecTemplate.ProviderRef = &common.LocalReference{Name: pc}
	c.SpecTemplate.ForProvider.Manifest = object("cockroachdb.rook.io/v1alpha1", "Cluster", "rook", name, map[string]any{
		"spec": map[string]any{"scope": map[string]any{"nodeCount": int64(3)}}})
	c.SpecTemplate.ForProvider.ConnectionDetails = []kubernetesv1.ConnectionDetail{
		{Key: "endpoint", FieldPath: "status.endpoint"},
		{Key: "port", FieldPath: "status.port"},
		{Key: "password", FromSecret: &kubernetesv1.RemoteSecretKeySelector{NameFieldPath: "status.credentialsSecret", Key: "password"}},
	}
	c.SpecTemplate.Patches = []kubernetesv1.ObjectPatch{
		{FromFieldPath: "spec.storageGB", ToFieldPath: "spec.storage.size", Format: "%vGi"},
		{FromFieldPath: "spec.engineVersion", ToFieldPath: "spec.version"},
		{FromClusterLabel: "region", ToFieldPath: "spec.region"},
	}
	return c
}

// pgClass is a PostgreSQLInstanceClass pointing at an ObjectClass.
func pgClass(ns, name string, target *kubernetesv1.ObjectClass, mode common.BindingMode) *databasev1.PostgreSQLInstanceClass {
	return &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, BindingMode: mode,
		ClassRef: common.ClassReference{APIVersion: kubernetesv1.GroupVersion.String(), Kind: "ObjectClass", Name: target.Name, Namespace: target.Namespace}}
}

// operatorReports plays the CockroachDB operator: it names a credentials Secret and
// reports the endpoint in the status of the remote Cluster name.
func operatorReports(t *testing.T, ctx context.Context, remote *remoteCluster, name, endpoint, password string) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(remote.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "rook", Name: name + "-root"},
		Data: map[string][]byte{"password": []byte(password)}})).To(Succeed())
	g.Eventually(func() error {
		cluster, err := remoteObject(ctx, remote.client, "cockroachdb.rook.io/v1alpha1", "Cluster", "rook", name)
		if err != nil {
			return err
		}
		_ = unstructured.SetNestedMap(cluster.Object, map[string]any{
			"endpoint": endpoint, "port": int64(26257), "credentialsSecret": name + "-root"}, "status")
		return remote.client.Status().Update(ctx, cluster)
	}).WithTimeout(timeout).Should(Succeed())
}

// boundObject waits for claim to be bound to an Object and returns it with the name of
// the remote object.
func boundObject(g Gomega, ctx context.Context, claim *databasev1.PostgreSQLInstance) (*kubernetesv1.Object, string) {
	o := &kubernetesv1.Object{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		ref := claim.Spec.ResourceRef
		g.Expect(ref).NotTo(BeNil())
		g.Expect(ref.Kind).To(Equal("Object"))
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, o)).To(Succeed())
	}).WithTimeout(timeout).Should(Succeed())
	m, err := o.Spec.ForProvider.Manifest.Object()
	g.Expect(err).NotTo(HaveOccurred())
	return o, m.GetName()
}

// TestClaimMetByObjectClass: a PostgreSQLInstance whose class points at an ObjectClass is
// met by a CockroachDB Cluster in a remote cluster (the seed's Kubernetes-native
// provider); its connection Secret comes from the remote object; Delete removes it.
func TestClaimMetByObjectClass(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	remote := startRemote(t)
	installCockroachCRD(t, ctx, remote)
	ns := "e2e-objectclass"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	startWorkloadManager(t)

	By(t, "an admin publishes an ObjectClass and a portable class pointing at it")
	g.Expect(env.Client.Create(ctx, kubeconfigSecret(adminNS, "objectclass-rook", remote.kubeconfig))).To(Succeed())
	g.Expect(env.Client.Create(ctx, providerConfig(adminNS, "objectclass-rook", "objectclass-rook"))).To(Succeed())
	class := cockroachClass(adminNS, "cockroach", "objectclass-rook")
	class.AllowedNamespaces = framework.Allow(ns) // the app team's portable classes may point at it
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Expect(env.Client.Create(ctx, pgClass(ns, "cockroach", class, ""))).To(Succeed())

	By(t, "a claim makes an Object, and the Object a CockroachDB Cluster in the remote cluster")
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders"}}
	claim.Spec.ClassRef = &common.LocalReference{Name: "cockroach"}
	claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "orders-db"}
	claim.Spec.StorageGB, claim.Spec.EngineVersion = 20, "15"
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	o, dbName := boundObject(g, ctx, claim)
	g.Expect(dbName).To(Equal("cockroach-" + strings.ReplaceAll(string(claim.UID), "-", "")[:8]))
	g.Expect(o.Spec.ClaimRef.Name).To(Equal("orders"))
	g.Expect(o.Spec.ProviderRef.Name).To(Equal("objectclass-rook"))
	var remoteDB *unstructured.Unstructured
	g.Eventually(func() (err error) {
		remoteDB, err = remoteObject(ctx, remote.client, "cockroachdb.rook.io/v1alpha1", "Cluster", "rook", dbName)
		return err
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(remoteDB.Object["spec"]).To(Equal(map[string]any{
		"scope": map[string]any{"nodeCount": int64(3)}, "storage": map[string]any{"size": "20Gi"}, "version": "15"}),
		"claim fields patched in; no cluster label without a first consumer")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		g.Expect(claim.Status.BindingPhase).To(Equal(common.BindingPhaseBound))
		g.Expect(framework.Condition(claim.Status.Conditions, common.TypeReady).Reason).To(Equal("WaitingForConnectionDetails"))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "once the operator reports, the claim is Ready with the remote connection details")
	operatorReports(t, ctx, remote, dbName, "orders.rook.svc", "orders-pw")
	conn := &corev1.Secret{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		g.Expect(framework.Condition(claim.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "orders-db"}, conn)).To(Succeed())
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(conn.Data).To(Equal(map[string][]byte{"endpoint": []byte("orders.rook.svc"), "port": []byte("26257"), "password": []byte("orders-pw")}))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
	g.Expect(o.Status.BindingPhase).To(Equal(common.BindingPhaseBound))
	g.Expect(string(o.Status.AtProvider.Raw)).NotTo(ContainSubstring("orders-pw"))

	By(t, "deleting the claim (reclaimPolicy Delete) deletes the Object and the remote Cluster")
	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	g.Eventually(func(g Gomega) {
		_, err := remoteObject(ctx, remote.client, "cockroachdb.rook.io/v1alpha1", "Cluster", "rook", dbName)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o))).To(BeTrue())
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim))).To(BeTrue())
	}).WithTimeout(timeout).Should(Succeed())
}

// TestWaitForFirstConsumer: a claim whose class binds on first consumer stays unbound
// until an application using its connection Secret is scheduled; the chosen cluster's
// region label reaches the class's configurator; the resource that needs the Secret is
// submitted once the claim is Ready, the others at once.
func TestWaitForFirstConsumer(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	remote := startRemote(t)
	installCockroachCRD(t, ctx, remote)
	ns := "e2e-wffc"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	startWorkloadManager(t)

	By(t, "a KubernetesCluster claim bound statically to an existing cluster in region eu-west")
	eu := boundCluster(t, ctx, ns, "eu", map[string]string{"region": "eu-west"}, remote.kubeconfig)
	cluster := &kubernetesv1.Cluster{}
	g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "eu"}, cluster)).To(Succeed())
	g.Expect(cluster.Status.BindingPhase).To(Equal(common.BindingPhaseBound))
	g.Expect(cluster.Status.AtProvider.Version).To(HavePrefix("v1."))
	g.Expect(cluster.Status.AtProvider.Endpoint).To(HavePrefix("https://127.0.0.1:"))
	conn := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "eu-connection"}, conn)).To(Succeed())
	g.Expect(conn.Data).To(Equal(map[string][]byte{"kubeconfig": remote.kubeconfig}))
	thief := &computev1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "thief"}}
	thief.Spec.ResourceRef = eu.Spec.ResourceRef.DeepCopy()
	g.Expect(env.Client.Create(ctx, thief)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(thief), thief)).To(Succeed())
		g.Expect(thief.Status.BindingPhase).To(Equal(common.BindingPhaseUnbound))
		g.Expect(framework.Condition(thief.Status.Conditions, common.TypeSynced).Reason).To(Equal("ResourceBoundElsewhere"))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a claim of a WaitForFirstConsumer class waits, saying for what")
	class := cockroachClass(ns, "regional", "eu")
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Expect(env.Client.Create(ctx, pgClass(ns, "regional", class, common.BindingWaitForFirstConsumer))).To(Succeed())
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ledger"}}
	claim.Spec.ClassRef = &common.LocalReference{Name: "regional"}
	claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "ledger-db"}
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	noSecret := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nosecret"}}
	noSecret.Spec.ClassRef = &common.LocalReference{Name: "regional"}
	g.Expect(env.Client.Create(ctx, noSecret)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		g.Expect(claim.Status.BindingPhase).To(Equal(common.BindingPhaseUnbound))
		synced := framework.Condition(claim.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Reason).To(Equal("WaitingForFirstConsumer"))
		g.Expect(synced.Message).To(ContainSubstring("uses Secret ledger-db"))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(noSecret), noSecret)).To(Succeed())
		g.Expect(framework.Condition(noSecret.Status.Conditions, common.TypeSynced).Reason).To(Equal("NoConsumerPossible"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		g.Expect(claim.Spec.ResourceRef).To(BeNil())
	}).WithTimeout(3 * time.Second).Should(Succeed())

	By(t, "an application using the Secret is scheduled to eu: the claim is provisioned with eu's region")
	app := emptyApp(ns, "ledger", map[string]string{"region": "eu-west"})
	app.Spec.ResourceTemplates = []workloadv1.KubernetesApplicationResourceTemplate{
		resourceTemplate("ledger-settings", map[string]string{"app": "ledger"},
			object("v1", "ConfigMap", "default", "ledger-settings", map[string]any{"data": map[string]any{"mode": "strict"}})),
		resourceTemplate("ledger-api", map[string]string{"app": "ledger"},
			object("v1", "ConfigMap", "default", "ledger-api", map[string]any{"data": map[string]any{"db": "ledger-api-ledger-db"}}), "ledger-db"),
	}
	g.Expect(env.Client.Create(ctx, app)).To(Succeed())
	waitScheduled(g, ctx, app, "eu")
	_, dbName := boundObject(g, ctx, claim)
	g.Expect(claim.Annotations).To(HaveKeyWithValue(common.SelectedClusterAnnotation, "KubernetesCluster/"+ns+"/"+eu.Name))
	g.Eventually(func(g Gomega) {
		db, err := remoteObject(ctx, remote.client, "cockroachdb.rook.io/v1alpha1", "Cluster", "rook", dbName)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(db.Object["spec"]).To(HaveKeyWithValue("region", "eu-west"))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "the choice sticks: a later consumer elsewhere and relabelling eu change nothing")
	later := emptyApp(ns, "later", nil)
	later.Spec.ClusterSelector = nil
	later.Spec.ProviderConfigRef = &workloadv1.ProviderConfigReference{Name: "eu"}
	later.Spec.ResourceTemplates = []workloadv1.KubernetesApplicationResourceTemplate{resourceTemplate("later-api", map[string]string{"app": "later"},
		object("v1", "ConfigMap", "default", "later-api", nil), "ledger-db")}
	g.Expect(env.Client.Create(ctx, later)).To(Succeed())
	waitScheduled(g, ctx, later, "eu")
	g.Eventually(func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(eu), eu); err != nil {
			return err
		}
		eu.Labels["region"] = "us-east"
		return env.Client.Update(ctx, eu)
	}).WithTimeout(timeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		g.Expect(claim.Annotations).To(HaveKeyWithValue(common.SelectedClusterAnnotation, "KubernetesCluster/"+ns+"/eu"))
		db, err := remoteObject(ctx, remote.client, "cockroachdb.rook.io/v1alpha1", "Cluster", "rook", dbName)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(db.Object["spec"]).To(HaveKeyWithValue("region", "eu-west"))
	}).WithTimeout(5 * time.Second).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, later)).To(Succeed())

	By(t, "the resource needing the Secret waits for it; the other one is submitted")
	g.Eventually(func(g Gomega) {
		st := getApp(g, ctx, app).Status
		g.Expect(st.State).To(Equal(workloadv1.ApplicationStatePartiallySubmitted))
		res := getResource(g, ctx, ns, "ledger-api")
		g.Expect(framework.Condition(res.Status.Conditions, common.TypeReady).Reason).To(Equal("WaitingForSecret"))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "the database becomes Ready: its Secret reaches the application's cluster")
	operatorReports(t, ctx, remote, dbName, "ledger.rook.svc", "ledger-pw")
	g.Eventually(func(g Gomega) {
		g.Expect(getApp(g, ctx, app).Status.State).To(Equal(workloadv1.ApplicationStateSubmitted))
		s := &corev1.Secret{}
		g.Expect(remote.client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "ledger-api-ledger-db"}, s)).To(Succeed())
		g.Expect(s.Data).To(HaveKeyWithValue("endpoint", []byte("ledger.rook.svc")))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "deleting the KubernetesCluster claim removes its Cluster, never the cluster itself")
	g.Expect(env.Client.Delete(ctx, app)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(app), app))
	}).WithTimeout(timeout).Should(BeTrue())
	g.Expect(env.Client.Delete(ctx, eu)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster))
	}).WithTimeout(timeout).Should(BeTrue())
	g.Expect(remote.client.List(ctx, &corev1.NamespaceList{})).To(Succeed(), "the remote cluster still answers")
	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim))
	}).WithTimeout(timeout).Should(BeTrue())
}
