package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/statelock"
)

// upgradeField is the field the upgraded chart's Bucket CRD gains.
const upgradeField = "upgradeNote"

// upgradeWithNewCRDField upgrades the release to a copy of the chart whose Bucket CRD has
// a new field: the chart applies the CRD (no kubectl step), a new controller pod takes
// over, and the existing claim is untouched (same generation, still Ready).
func upgradeWithNewCRDField(t *testing.T, g Gomega, ctx context.Context, n *nodeEnv, helm string, bucket *storagev1.Bucket) {
	g.Expect(dryRunBucketWithNewField(ctx, n)).To(MatchError(ContainSubstring(`unknown field "spec.`+upgradeField+`"`)),
		"before the upgrade the API server does not know the field")
	old := n.controllerPod(g, ctx)
	generation := bucket.Generation
	chart := chartWithNewBucketField(t, g)
	n.helm(g, helm, "upgrade", "terraplane", chart, "-n", adminNS, "--reuse-values", "--wait", "--timeout", "5m",
		"--set", "podAnnotations.terraplane\\.io/upgraded=yes")
	g.Expect(dryRunBucketWithNewField(ctx, n)).To(Succeed(), "the upgrade applied the CRD with the new field")
	g.Eventually(func() string { return n.controllerPod(g, ctx).Name }).WithTimeout(5*time.Minute).WithPolling(time.Second).
		ShouldNot(Equal(old.Name), "a new controller pod runs")
	g.Consistently(func(g Gomega) {
		g.Expect(n.Client.Get(ctx, client.ObjectKeyFromObject(bucket), bucket)).To(Succeed())
		g.Expect(bucket.Generation).To(Equal(generation))
		g.Expect(meta(bucket.Status.Conditions, common.TypeReady)).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(20*time.Second).WithPolling(2*time.Second).Should(Succeed(), "the existing claim is untouched")
}

// dryRunBucketWithNewField creates a Bucket that sets upgradeField, as a server-side
// dry run with strict field validation (an unknown field is an error, not pruned).
func dryRunBucketWithNewField(ctx context.Context, n *nodeEnv) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(storagev1.GroupVersion.WithKind("Bucket"))
	u.SetNamespace("demo")
	u.SetName("dry-run")
	_ = unstructured.SetNestedField(u.Object, "set by the upgrade test", "spec", upgradeField)
	return n.Client.Create(ctx, u, client.DryRunAll, client.FieldValidation("Strict"))
}

// chartWithNewBucketField copies the chart and adds upgradeField to its Bucket CRD.
func chartWithNewBucketField(t *testing.T, g Gomega) string {
	dst := filepath.Join(t.TempDir(), "terraplane")
	g.Expect(os.CopyFS(dst, os.DirFS(chartDir))).To(Succeed())
	path := filepath.Join(dst, "templates", "crds", "storage.terraplane.io_buckets.yaml")
	raw, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred())
	crd := map[string]any{}
	g.Expect(yaml.Unmarshal(raw, &crd)).To(Succeed())
	versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
	g.Expect(versions).NotTo(BeEmpty())
	for i := range versions {
		v := versions[i].(map[string]any)
		g.Expect(unstructured.SetNestedField(v, map[string]any{"type": "string", "description": "A field the upgrade added."},
			"schema", "openAPIV3Schema", "properties", "spec", "properties", upgradeField)).To(Succeed())
	}
	g.Expect(unstructured.SetNestedSlice(crd, versions, "spec", "versions")).To(Succeed())
	out, err := yaml.Marshal(crd)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(path, out, 0o644)).To(Succeed())
	return dst
}

// deletePodMidApply claims a second bucket, deletes the controller pod while terraform
// applies it (its state lock held for an apply), and checks that the new pod finishes
// it: the claim Ready, one bucket made, and no lock left held.
func deletePodMidApply(t *testing.T, g Gomega, ctx context.Context, n *nodeEnv, minioEndpoint string) *storagev1.Bucket {
	before := heldLocks(g, ctx, n)
	claim := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "evicted"}}
	claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "evicted-bucket"}
	g.Expect(n.Client.Create(ctx, claim)).To(Succeed())
	var (
		lock string
		info statelock.LockInfo
	)
	g.Eventually(func(g Gomega) {
		found := false
		for name, held := range heldLocks(g, ctx, n) {
			if _, there := before[name]; !there && strings.Contains(strings.ToLower(held.Operation), "apply") {
				lock, info, found = name, held, true
			}
		}
		g.Expect(found).To(BeTrue(), "the new claim's resource is being applied")
	}).WithTimeout(3*time.Minute).WithPolling(100*time.Millisecond).Should(Succeed(), func() string {
		_ = n.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)
		var b strings.Builder
		for name, held := range heldLocks(g, ctx, n) {
			fmt.Fprintf(&b, "lock %s held by %s for %s\n", name, held.Who, held.Operation)
		}
		return fmt.Sprintf("%sclaim conditions %+v", b.String(), claim.Status.Conditions)
	})
	pod := n.controllerPod(g, ctx)
	t.Logf("deleting controller pod %s while it holds %s: %s for %s", pod.Name, lock, info.Who, info.Operation)
	g.Expect(n.Client.Delete(ctx, pod)).To(Succeed())

	waitReadyIn(g, ctx, n.Client, claim, func() []metav1.Condition { return claim.Status.Conditions })
	g.Expect(claim.Status.BindingPhase).To(Equal(common.BindingPhaseBound))
	g.Expect(n.controllerPod(g, ctx).Name).NotTo(Equal(pod.Name))
	g.Eventually(func(g Gomega) {
		held, err := statelock.LockHolder(ctx, n.Client, client.ObjectKey{Namespace: adminNS, Name: lock})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(held).To(BeNil(), "the state lock is free")
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	buckets := minioBuckets(g, ctx, minioEndpoint)
	g.Expect(buckets).To(HaveLen(2), "one bucket for each claim, none made twice: %v", buckets)
	return claim
}

// heldLocks are the state locks held in the admin namespace now, by the name of their
// Lease.
func heldLocks(g Gomega, ctx context.Context, n *nodeEnv) map[string]statelock.LockInfo {
	held, err := statelock.HeldIn(ctx, n.Client, adminNS)
	g.Expect(err).NotTo(HaveOccurred())
	return held
}

// uninstallKeeps uninstalls the release: the controller is gone, and the CRDs, the
// claims, their buckets in MinIO and the Terraform state Secrets remain, while what the
// controller made for runner pools (there before) goes.
func uninstallKeeps(g Gomega, ctx context.Context, n *nodeEnv, helm, minioEndpoint string, claims ...*storagev1.Bucket) {
	states := stateSecrets(g, ctx, n)
	g.Expect(states).To(HaveLen(len(claims)), "a state Secret per claimed bucket")
	runner := client.MatchingLabels{"app.kubernetes.io/name": "terraplane-runner"}
	made := []client.ObjectList{&appsv1.DeploymentList{}, &corev1.ServiceList{}, &corev1.SecretList{}, &corev1.ServiceAccountList{}, &rbacv1.RoleBindingList{}}
	for _, list := range made {
		g.Expect(n.Client.List(ctx, list, runner)).To(Succeed())
		g.Expect(apimeta.ExtractList(list)).NotTo(BeEmpty(), "before the uninstall, the controller made runner pools' objects: %T", list)
	}
	n.helm(g, helm, "uninstall", "terraplane", "-n", adminNS, "--wait", "--timeout", "3m")
	g.Eventually(func() int {
		pods := &corev1.PodList{}
		g.Expect(n.Client.List(ctx, pods, client.InNamespace(adminNS), client.MatchingLabels{"app.kubernetes.io/name": "terraplane"})).To(Succeed())
		return len(pods.Items)
	}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(BeZero(), "the controller is gone")
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	g.Expect(n.Client.Get(ctx, client.ObjectKey{Name: "buckets.storage.terraplane.io"}, crd)).To(Succeed(), "the CRDs stay")
	for _, c := range claims {
		err := n.Client.Get(ctx, client.ObjectKeyFromObject(c), c)
		g.Expect(apierrors.IsNotFound(err)).To(BeFalse(), "claim %s stays: %v", c.Name, err)
	}
	g.Expect(minioBuckets(g, ctx, minioEndpoint)).To(HaveLen(len(claims)), "the buckets stay")
	g.Expect(stateSecrets(g, ctx, n)).To(Equal(states), "the state Secrets stay")
	g.Eventually(func(g Gomega) {
		for _, list := range append(made, &corev1.PodList{}) {
			g.Expect(n.Client.List(ctx, list, runner)).To(Succeed())
			g.Expect(apimeta.ExtractList(list)).To(BeEmpty(), "what the controller made for runner pools goes with the release: %T", list)
		}
	}).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
}

// reinstallPicksUp installs the release again under the same name: Helm adopts the CRDs
// the uninstall kept, and the new controller carries on with the claims.
func reinstallPicksUp(g Gomega, ctx context.Context, n *nodeEnv, helm string, claims ...*storagev1.Bucket) {
	n.helm(g, helm, append([]string{"install", "terraplane", chartDir, "-n", adminNS, "--wait", "--timeout", "5m"}, imageValues...)...)
	n.controllerPod(g, ctx)
	for _, c := range claims {
		generation := c.Generation
		waitReadyIn(g, ctx, n.Client, c, func() []metav1.Condition { return c.Status.Conditions })
		g.Expect(c.Generation).To(Equal(generation), "claim %s is untouched", c.Name)
	}
}

// stateSecrets are the names of the Terraform state Secrets in the admin namespace.
func stateSecrets(g Gomega, ctx context.Context, n *nodeEnv) []string {
	secrets := &corev1.SecretList{}
	g.Expect(n.Client.List(ctx, secrets, client.InNamespace(adminNS))).To(Succeed())
	var names []string
	for _, s := range secrets.Items {
		if strings.HasPrefix(s.Name, "tfstate-") {
			names = append(names, s.Name)
		}
	}
	return names
}

// minioBuckets lists the buckets in MinIO, as its root user.
func minioBuckets(g Gomega, ctx context.Context, endpoint string) []string {
	mc, err := minio.New(strings.TrimPrefix(endpoint, "http://"), &minio.Options{Creds: credentials.NewStaticV4(quickstartUser, quickstartPassword, "")})
	g.Expect(err).NotTo(HaveOccurred())
	list, err := mc.ListBuckets(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, b := range list {
		names = append(names, b.Name)
	}
	return names
}

// meta is the status of condition typ, Unknown when absent.
func meta(conds []metav1.Condition, typ string) metav1.ConditionStatus {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status
		}
	}
	return metav1.ConditionUnknown
}
