package install

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/test/framework"
)

// adminNS is where the chart is installed and the quickstart's Provider and classes live.
const adminNS = "terraplane-system"

// imageValues point the chart at the image the node tests imported.
// The controller serves the quickstart's app namespace too (its connection Secret is there).
var imageValues = []string{"--set", "image.repository=" + nodeImageRepo, "--set", "image.tag=" + nodeImageTag, "--set", "image.pullPolicy=Never",
	"--set", "tenancy.namespaces={demo}"}

// TestHelmOnNode installs the chart as a platform team does, on a real node: `helm
// install` with the freshly built image into a namespace that enforces the restricted
// Pod Security level; the controller pod becomes Ready; the quickstart's Provider points
// at a MinIO on the node; the Bucket claim becomes Bound and Ready, and the app team reads
// its connection Secret in the app namespace and reaches the bucket with it; a PostgreSQL
// Database, whose module needs the psql the image lacks, is refused. Then the
// release's life: `helm upgrade` to a chart whose CRD gained a field, the controller pod
// deleted in the middle of an apply, `helm uninstall` (which keeps what it should), and
// `helm install` again, and runner Deployments: terraform in runner pods. docs/install.md
// section 9 walks the same path.
func TestHelmOnNode(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	n := node(t)
	helm := tool(t, "helm", "make tools-test")

	By(t, "MinIO on the node's address, where pods reach it")
	minioServer, err := devenv.StartMinIOOn(ctx, n.NodeIP, filepath.Join(t.TempDir(), "minio"), 0, quickstartUser, quickstartPassword)
	g.Expect(err).NotTo(HaveOccurred(), "MinIO comes from `make tools`")
	defer minioServer.Stop()

	By(t, "helm install into a namespace that enforces restricted; the controller pod becomes Ready")
	g.Expect(n.Client.Create(ctx, restrictedNS(adminNS))).To(Succeed())
	g.Expect(n.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}})).To(Succeed(), "the namespaces the chart serves exist first")
	defer n.dumpPods(t, adminNS)
	n.helm(g, helm, append([]string{"install", "terraplane", chartDir, "-n", adminNS, "--wait", "--timeout", "5m"}, imageValues...)...)
	pod := n.controllerPod(g, ctx)
	t.Logf("controller pod %s Ready", pod.Name)

	By(t, "the quickstart: a Provider pointing at MinIO on the node, a Bucket claim")
	applyQuickstartTo(g, ctx, n.Client, minioServer.Endpoint)
	bucket := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "quickstart"}}
	waitReadyIn(g, ctx, n.Client, bucket, func() []metav1.Condition { return bucket.Status.Conditions })
	g.Expect(bucket.Status.BindingPhase).To(Equal(common.BindingPhaseBound))

	By(t, "the app team reads the connection Secret in its namespace and reaches the bucket")
	alice, err := n.framework().Tenant(ctx, "alice", "demo")
	g.Expect(err).NotTo(HaveOccurred())
	secret := &corev1.Secret{}
	g.Expect(alice.Client.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "quickstart-bucket"}, secret)).To(Succeed())
	for _, k := range []string{"endpoint", "bucket", "region", "accessKeyID", "secretAccessKey"} {
		g.Expect(secret.Data).To(HaveKeyWithValue(k, Not(BeEmpty())), k)
	}
	g.Expect(string(secret.Data["endpoint"])).To(Equal(minioServer.Endpoint))
	exists, err := s3From(g, secret).BucketExists(ctx, string(secret.Data["bucket"]))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exists).To(BeTrue(), "the bucket the controller pod made is in MinIO")

	By(t, "a plan policy whose rule does not compile is refused by the chart's webhook, through its Service")
	policyRefusedOnNode(g, ctx, n)

	By(t, "the image carries no psql: a PostgreSQL Database is refused with ClientMissing, and one event")
	databaseKindRefused(g, ctx, n)

	By(t, "helm upgrade to a chart whose Bucket CRD gained a field")
	upgradeWithNewCRDField(t, g, ctx, n, helm, bucket)

	By(t, "the controller pod deleted while terraform applies a second claim")
	evicted := deletePodMidApply(t, g, ctx, n, minioServer.Endpoint)

	By(t, "helm uninstall leaves the CRDs, the claims, the buckets and the state Secrets")
	uninstallKeeps(g, ctx, n, helm, minioServer.Endpoint, bucket, evicted)

	By(t, "helm install again under the same name picks up the kept CRDs and claims")
	reinstallPicksUp(g, ctx, n, helm, bucket, evicted)

	By(t, "runner Deployments (the default): a new claim is applied by a runner pod, which scales to zero and back")
	runnerPodApplies(t, g, ctx, n, helm)
}

// helm runs helm against the node's cluster.
func (n *nodeEnv) helm(g Gomega, bin string, args ...string) string {
	return runToolOn(g, n.Kubeconfig(), bin, args...)
}

// controllerPod waits until the release's controller pod is Ready and returns it.
func (n *nodeEnv) controllerPod(g Gomega, ctx context.Context) *corev1.Pod {
	var ready *corev1.Pod
	g.Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(n.Client.List(ctx, pods, client.InNamespace(adminNS), client.MatchingLabels{"app.kubernetes.io/name": "terraplane"})).To(Succeed())
		ready = nil
		for i, p := range pods.Items {
			if p.DeletionTimestamp == nil && podReady(&p) {
				ready = &pods.Items[i]
			}
		}
		g.Expect(ready).NotTo(BeNil(), "a Ready controller pod")
	}).WithTimeout(5 * time.Minute).WithPolling(time.Second).Should(Succeed())
	return ready
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// dumpPods logs the pods of ns, their events and the end of their logs when the test
// failed.
func (n *nodeEnv) dumpPods(t *testing.T, ns string) {
	if !t.Failed() {
		return
	}
	ctx := context.Background()
	pods, err := n.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Logf("list pods: %v", err)
		return
	}
	for _, p := range pods.Items {
		t.Logf("pod %s: phase %s, conditions %+v", p.Name, p.Status.Phase, p.Status.Conditions)
		lines := int64(80)
		raw, err := n.Clientset.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: &lines}).DoRaw(ctx)
		t.Logf("log of %s (%v):\n%s", p.Name, err, raw)
	}
	events, _ := n.Clientset.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	for _, e := range events.Items {
		t.Logf("event %s %s: %s %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, strings.TrimSpace(e.Message))
	}
}

// framework is a test framework Env on the node's cluster (for Tenant).
func (n *nodeEnv) framework() *framework.Env {
	cfg, err := clientcmd.BuildConfigFromFlags("", n.Kubeconfig())
	if err != nil {
		cfg = &rest.Config{}
	}
	return &framework.Env{ControlPlane: &devenv.ControlPlane{Config: cfg, Kubeconfig: n.Kubeconfig()}, Client: n.Client}
}

// s3From is a MinIO client built only from a claim's connection Secret.
func s3From(g Gomega, secret *corev1.Secret) *minio.Client {
	u, err := url.Parse(string(secret.Data["endpoint"]))
	g.Expect(err).NotTo(HaveOccurred())
	mc, err := minio.New(u.Host, &minio.Options{
		Creds:  credentials.NewStaticV4(string(secret.Data["accessKeyID"]), string(secret.Data["secretAccessKey"]), ""),
		Secure: u.Scheme == "https", Region: string(secret.Data["region"]),
	})
	g.Expect(err).NotTo(HaveOccurred())
	return mc
}
