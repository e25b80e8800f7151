package kinds

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
)

func TestConfigureObject(t *testing.T) {
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "team", UID: "0a1b2c3d-4e5f-6789"}}
	claim.Spec.StorageGB, claim.Spec.EngineVersion = 20, "15"
	manifest := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cockroachdb.rook.io/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"namespace": "rook", "name": "cockroach"},
		"spec":     map[string]any{"scope": map[string]any{"nodeCount": int64(3)}},
	}}
	tmpl, err := workloadv1.TemplateFrom(manifest)
	if err != nil {
		t.Fatal(err)
	}
	class := &kubernetesv1.ObjectClass{}
	class.SpecTemplate.ForProvider.Manifest = tmpl
	class.SpecTemplate.Patches = []kubernetesv1.ObjectPatch{
		{FromFieldPath: "spec.storageGB", ToFieldPath: "spec.storage.size", Format: "%vGi"},
		{FromFieldPath: "spec.engineVersion", ToFieldPath: "spec.version"},
		{FromFieldPath: "spec.highAvailability", ToFieldPath: "spec.ha"},       // unset in the claim: skipped
		{FromFieldPath: "metadata.name", ToFieldPath: "metadata.labels.claim"}, // a string into a map
		{FromClusterLabel: "region", ToFieldPath: "spec.region"},
		{FromClusterLabel: "zone", ToFieldPath: "spec.zone"}, // no such label: skipped
	}
	cases := map[string]struct {
		labels map[string]string
		want   map[string]any
	}{
		"immediate": {nil, map[string]any{"scope": map[string]any{"nodeCount": int64(3)}, "storage": map[string]any{"size": "20Gi"}, "version": "15"}},
		"placed": {map[string]string{"region": "eu-west"}, map[string]any{"scope": map[string]any{"nodeCount": int64(3)},
			"storage": map[string]any{"size": "20Gi"}, "version": "15", "region": "eu-west"}},
	}
	for name, c := range cases {
		o := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Name: "postgresqlinstance-uid"}}
		if err := configureObject(registry.Request{Claim: claim, Class: class, ClusterLabels: c.labels}, o); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := o.Spec.ForProvider.Manifest.Object()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, got.Object["spec"]); diff != "" {
			t.Errorf("%s: spec (-want +got):\n%s", name, diff)
		}
		if got.GetName() != "cockroach-0a1b2c3d" || got.GetLabels()["claim"] != "orders" {
			t.Errorf("%s: metadata = %v", name, got.Object["metadata"])
		}
	}
	if m, _ := class.SpecTemplate.ForProvider.Manifest.Object(); m.GetName() != "cockroach" {
		t.Errorf("the class's manifest was changed: %v", m.Object)
	}
}
