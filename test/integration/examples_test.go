package integration

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/devenv"
)

// TestExamplesAreValid server-side applies every example (namespaces for real, the rest
// as a dry run) so the manifests in examples/ keep matching the CRDs.
func TestExamplesAreValid(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	for _, ns := range []string{"terraplane-system", "demo", "team-aws", "team-onprem"} {
		g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	}
	for _, dir := range []string{"../../examples/quickstart", "../../examples/databases", "../../examples/workloads", "../../examples/multicloud"} {
		objs, err := devenv.ApplyDir(ctx, env.Client, dir, client.DryRunAll)
		g.Expect(err).NotTo(HaveOccurred(), dir)
		g.Expect(objs).NotTo(BeEmpty(), dir)
	}
	// The multicloud claim has no namespace: it is applied with kubectl apply -n.
	objs, err := devenv.ApplyDirWith(ctx, env.Client, "../../examples/multicloud/claim", func(o *unstructured.Unstructured) error {
		o.SetNamespace("team-aws")
		return nil
	}, client.DryRunAll)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objs).To(HaveLen(1))
}
