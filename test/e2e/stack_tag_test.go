package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/app"
)

// TestStackInstallFollowsItsTag: an install that names a package by tag moves to a new
// digest pushed under that tag at the next refresh; an install by CRD stays on the digest
// it resolved (upgrading is naming a package).
func TestStackInstallFollowsItsTag(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-stack-tag"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	host := stackRegistry(t)
	pushStacks(t, host, map[string]string{"epsilon": "stacks/epsilon:v1", "gamma": "stacks/gamma:v1"})
	mgr, err := env.StartManager(t.TempDir(), app.Options{StackRegistry: host, StackTagRefresh: 2 * time.Second})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = mgr.Stop() })

	byTag := &stacksv1.StackInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "notes"}}
	byTag.Spec.Package = "stacks/epsilon:v1"
	g.Expect(env.Client.Create(ctx, byTag)).To(Succeed())
	waitInstallReady(g, ctx, byTag)
	first := byTag.Status.ResolvedPackage
	byCRD := clusterInstall("things", "", "things.gamma.example.org/v1alpha1")
	g.Expect(env.Client.Create(ctx, byCRD)).To(Succeed())
	waitInstallReady(g, ctx, byCRD)
	pinned := byCRD.Status.ResolvedPackage
	g.Expect(pinned).To(HavePrefix(host + "/stacks/gamma@sha256:"))

	By(t, "a new digest under the same tag: the install by tag moves, the install by CRD stays")
	newer := t.TempDir()
	g.Expect(os.CopyFS(newer, os.DirFS("testdata/stacks/epsilon"))).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(newer, ".registry/app.yaml"), []byte("title: Epsilon Notes\nversion: 1.0.1\npermissionScope: Namespaced\n"), 0o644)).To(Succeed())
	terraplaneCLI(t, "stack", "push", newer, host+"/stacks/epsilon:v1")
	newerGamma := t.TempDir()
	g.Expect(os.CopyFS(newerGamma, os.DirFS("testdata/stacks/gamma"))).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(newerGamma, ".registry/app.yaml"), []byte("title: Gamma Things\nversion: 1.0.1\npermissionScope: Cluster\n"), 0o644)).To(Succeed())
	terraplaneCLI(t, "stack", "push", newerGamma, host+"/stacks/gamma:v1")
	g.Eventually(func(g Gomega) {
		g.Expect(installCondition(g, ctx, byTag, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(byTag.Status.ResolvedPackage).NotTo(Equal(first))
		notes := &stacksv1.Stack{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "notes"}, notes)).To(Succeed())
		g.Expect(notes.Spec.Version).To(Equal("1.0.1"))
	}).WithTimeout(stackTimeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		events, err := env.Events(ctx, byTag)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(events).To(ContainElement(And(HaveField("Reason", stacksv1.ReasonUpgraded),
			HaveField("Message", host+"/stacks/epsilon:v1 now points at "+byTag.Status.ResolvedPackage+": installed it (was "+first+")"))))
	}).WithTimeout(stackTimeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(installCondition(g, ctx, byCRD, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(byCRD.Status.ResolvedPackage).To(Equal(pinned))
	}).WithTimeout(5 * time.Second).Should(Succeed())

	for _, o := range []client.Object{byTag, byCRD} {
		g.Expect(env.Client.Delete(ctx, o)).To(Succeed())
	}
	waitGone(g, ctx, byTag, byCRD, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "notes.epsilon.example.org"}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "things.gamma.example.org"}})
}
