package integration

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/devenv"
)

// TestExamplesAreValid server-side applies every example (namespaces for real, the rest
// as a dry run) so the manifests in the README keep matching the CRDs.
func TestExamplesAreValid(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	for _, ns := range []string{"terraplane-system", "demo"} {
		g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	}
	for _, dir := range []string{"../../examples/quickstart", "../../examples/databases", "../../examples/workloads"} {
		objs, err := devenv.ApplyDir(ctx, env.Client, dir, client.DryRunAll)
		g.Expect(err).NotTo(HaveOccurred(), dir)
		g.Expect(objs).NotTo(BeEmpty(), dir)
	}
}
