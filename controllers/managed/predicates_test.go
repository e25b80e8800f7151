package managed

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

func TestUserAnnotationChangedIgnoresTheCreatePendingRecord(t *testing.T) {
	with := func(ann map[string]string) *terraformv1.Module {
		return &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}
	}
	cases := []struct {
		name          string
		before, after map[string]string
		want          bool
	}{
		{"create pending recorded", nil, map[string]string{CreatePendingAnnotation: "t"}, false},
		{"create pending cleared", map[string]string{CreatePendingAnnotation: "t", "a": "1"}, map[string]string{"a": "1"}, false},
		{"create again asked", nil, map[string]string{CreateAgainAnnotation: "true"}, true},
		{"user annotation changed", map[string]string{"a": "1"}, map[string]string{"a": "2"}, true},
	}
	for _, c := range cases {
		got := userAnnotationChanged.Update(event.UpdateEvent{ObjectOld: with(c.before), ObjectNew: with(c.after)})
		if got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
