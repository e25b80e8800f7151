package claim

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
)

// fakePlacement answers Cluster with fixed values and records what it was asked.
type fakePlacement struct {
	ref    string
	labels map[string]string
	err    error
	asked  []string // namespace, secret, selected
}

func (f *fakePlacement) Cluster(_ context.Context, ns, secret, selected string) (string, map[string]string, error) {
	f.asked = []string{ns, secret, selected}
	return f.ref, f.labels, f.err
}

func (f *fakePlacement) Consumers() (client.Object, predicate.Predicate) { return nil, nil }

// TestChoose: a chosen cluster is recorded in the claim's annotations with its labels at
// that moment; none yet, or an error, leaves the claim as it was.
func TestChoose(t *testing.T) {
	failed := errors.New("boom")
	cases := map[string]struct {
		placement   fakePlacement
		selected    string
		labels      map[string]string
		err         error
		annotations map[string]string
	}{
		"no consumer yet": {},
		"first consumer's cluster": {
			placement: fakePlacement{ref: "ProviderConfig/ns/east", labels: map[string]string{"region": "east"}},
			labels:    map[string]string{"region": "east"},
			annotations: map[string]string{common.SelectedClusterAnnotation: "ProviderConfig/ns/east",
				common.SelectedClusterLabelsAnnotation: `{"region":"east"}`},
		},
		"cluster without labels": {
			placement: fakePlacement{ref: "KubernetesCluster/ns/c"},
			labels:    map[string]string{},
			annotations: map[string]string{common.SelectedClusterAnnotation: "KubernetesCluster/ns/c",
				common.SelectedClusterLabelsAnnotation: `{}`},
		},
		"selected by the user": {
			placement: fakePlacement{ref: "KubernetesCluster/ns/c", labels: map[string]string{"a": "b"}},
			selected:  "KubernetesCluster/ns/c",
			labels:    map[string]string{"a": "b"},
			annotations: map[string]string{common.SelectedClusterAnnotation: "KubernetesCluster/ns/c",
				common.SelectedClusterLabelsAnnotation: `{"a":"b"}`},
		},
		"placement fails": {placement: fakePlacement{err: failed}, err: failed},
	}
	for name, c := range cases {
		claim := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}
		if c.selected != "" {
			claim.Annotations = map[string]string{common.SelectedClusterAnnotation: c.selected}
		}
		want := claim.DeepCopy().Annotations
		if c.annotations != nil {
			want = c.annotations
		}
		labels, err := choose(context.Background(), &c.placement, claim, "creds")
		if !errors.Is(err, c.err) {
			t.Errorf("%s: err %v, want %v", name, err, c.err)
		}
		if diff := cmp.Diff(c.labels, labels); diff != "" {
			t.Errorf("%s: labels (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(want, claim.Annotations); diff != "" {
			t.Errorf("%s: annotations (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff([]string{"ns", "creds", c.selected}, c.placement.asked); diff != "" {
			t.Errorf("%s: asked (-want +got):\n%s", name, diff)
		}
	}
}
