package integration

import (
	"context"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsdbv1 "terraplane.io/terraplane/apis/aws/database/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	mysqldbv1 "terraplane.io/terraplane/apis/mysql/database/v1alpha1"
	pgdbv1 "terraplane.io/terraplane/apis/postgresql/database/v1alpha1"
)

// TestPrinterColumns checks, on the CRDs the API server serves, that kubectl get shows
// every claim's STATUS, CLASS, RESOURCE, READY and SYNCED, and every managed kind's
// STATUS, CLAIM, CLASS (but a Cluster, which has none), READY and SYNCED.
func TestPrinterColumns(t *testing.T) {
	g := NewWithT(t)
	var crds apiextensionsv1.CustomResourceDefinitionList
	g.Expect(env.Client.List(context.Background(), &crds)).To(Succeed())
	want := map[string][]string{
		"claim":   {"STATUS", "CLASS", "RESOURCE", "READY", "SYNCED", "AGE"},
		"managed": {"STATUS", "CLAIM", "CLASS", "READY", "SYNCED", "AGE"},
	}
	seen := map[string]int{}
	for _, crd := range crds.Items {
		for category, columns := range want {
			if !slices.Contains(crd.Spec.Names.Categories, category) {
				continue
			}
			seen[category]++
			var got []string
			for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
				got = append(got, c.Name)
			}
			if crd.Name == "clusters.kubernetes.terraplane.io" { // static only: it has no class
				columns = slices.DeleteFunc(slices.Clone(columns), func(c string) bool { return c == "CLASS" })
			}
			g.Expect(got).To(ContainElements(columns), "%s", crd.Name)
		}
	}
	g.Expect(seen["claim"]).To(BeNumerically(">=", 5), "the five claim kinds")
	g.Expect(seen["managed"]).To(BeNumerically(">=", 15), "the managed kinds")
}

// TestManagedNamesImmutable checks that the API server refuses a new name on managed
// resources whose name change would replace what they made, saying to create a new one.
func TestManagedNamesImmutable(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "int-names"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	ref := &common.LocalReference{Name: "p"}
	pg := &pgdbv1.Database{ObjectMeta: meta("pg")}
	pg.Spec.ProviderRef, pg.Spec.ForProvider = ref, pgdbv1.DatabaseParameters{DatabaseName: "orders", RoleName: "orders"}
	my := &mysqldbv1.Database{ObjectMeta: meta("my")}
	my.Spec.ProviderRef, my.Spec.ForProvider = ref, mysqldbv1.DatabaseParameters{DatabaseName: "orders", RoleName: "orders"}
	rds := &awsdbv1.RDSInstance{ObjectMeta: meta("rds")}
	rds.Spec.ProviderRef, rds.Spec.ForProvider = ref, awsdbv1.RDSInstanceParameters{Identifier: "orders", Engine: "postgres", DatabaseName: "orders"}
	for _, o := range []client.Object{pg, my, rds} {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	}
	for _, tc := range []struct {
		obj    client.Object
		change func()
		want   string
	}{
		{pg, func() { pg.Spec.ForProvider.DatabaseName = "billing" }, "forProvider.databaseName is immutable"},
		{pg, func() { pg.Spec.ForProvider.RoleName = "billing" }, "forProvider.roleName is immutable"},
		{my, func() { my.Spec.ForProvider.DatabaseName = "billing" }, "forProvider.databaseName is immutable"},
		{rds, func() { rds.Spec.ForProvider.Identifier = "billing" }, "forProvider.identifier is immutable"},
		{rds, func() { rds.Spec.ForProvider.Engine = "mysql" }, "forProvider.engine is immutable"},
	} {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tc.obj), tc.obj)).To(Succeed())
		orig := tc.obj.DeepCopyObject().(client.Object)
		tc.change()
		err := env.Client.Patch(ctx, tc.obj, client.MergeFrom(orig))
		g.Expect(err).To(MatchError(And(ContainSubstring(tc.want), ContainSubstring("create a new claim or resource instead"))), tc.want)
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(tc.obj), tc.obj)).To(Succeed())
	}
}
