package integration

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
)

// TestClaimValidation checks that bad portable fields are refused by the API server
// (OpenAPI and CEL) with a message that says what is wrong.
func TestClaimValidation(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, "int-validation")).To(Succeed())
	claim := func(name string, p databasev1.DatabaseParameters) *databasev1.PostgreSQLInstance {
		c := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "int-validation", Name: name}}
		c.Spec.DatabaseParameters = p
		return c
	}
	cases := map[string]struct {
		params databasev1.DatabaseParameters
		want   string
	}{
		"version pattern":  {databasev1.DatabaseParameters{EngineVersion: "fifteen"}, "spec.engineVersion"},
		"storage maximum":  {databasev1.DatabaseParameters{StorageGB: 70000}, "spec.storageGB"},
		"ha needs storage": {databasev1.DatabaseParameters{HighAvailability: true, StorageGB: 5}, "highAvailability needs storageGB >= 10"},
	}
	for name, tc := range cases {
		err := env.Client.Create(ctx, claim("bad", tc.params))
		g.Expect(err).To(HaveOccurred(), name)
		g.Expect(err.Error()).To(ContainSubstring(tc.want), name)
	}

	ok := claim("ok", databasev1.DatabaseParameters{EngineVersion: "15", StorageGB: 20})
	g.Expect(env.Client.Create(ctx, ok)).To(Succeed())
	orig := ok.DeepCopy()
	ok.Spec.EngineVersion = "16"
	err := env.Client.Patch(ctx, ok, client.MergeFrom(orig)) // no resourceVersion: only validation can refuse it
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("engineVersion is immutable"))
}
