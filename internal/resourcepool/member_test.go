package resourcepool

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// TestStateOf: a member's state from its annotations, deletion and conditions.
func TestStateOf(t *testing.T) {
	taken := map[string]string{common.PoolMemberTakenByAnnotation: "c/uid"}
	cond := func(typ string, s metav1.ConditionStatus, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, ObservedGeneration: gen}
	}
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		deleting bool
		conds    []metav1.Condition
		want     State
	}{
		{"new", nil, false, nil, Provisioning},
		{"ready", nil, false, []metav1.Condition{cond("Ready", "True", 1), cond("Synced", "True", 1)}, Ready},
		{"taken beats ready", taken, false, []metav1.Condition{cond("Ready", "True", 1)}, HandedOut},
		{"taken beats deleting", taken, true, nil, HandedOut},
		{"deleting", nil, true, []metav1.Condition{cond("Ready", "True", 1)}, Deleting},
		{"failing", nil, false, []metav1.Condition{cond("Ready", "False", 1), cond("Synced", "False", 1)}, Failed},
		{"a failure of an older generation is not this one's", nil, false, []metav1.Condition{cond("Synced", "False", 0)}, Provisioning},
		{"ready though a change fails", nil, false, []metav1.Condition{cond("Ready", "True", 1), cond("Synced", "False", 1)}, Ready},
	} {
		if got := StateOf(tc.ann, tc.deleting, 1, tc.conds); got != tc.want {
			t.Errorf("%s: StateOf = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestAnnotations: taker and fill records read back what they write; malformed ones
// name nothing.
func TestAnnotations(t *testing.T) {
	tk := Taker{Name: "orders", UID: "1234"}
	if got := ParseTaker(tk.String()); got != tk {
		t.Errorf("ParseTaker(%q) = %+v", tk.String(), got)
	}
	for _, bad := range []string{"", "orders", "/1234", "orders/"} {
		if got := ParseTaker(bad); !got.IsZero() {
			t.Errorf("ParseTaker(%q) = %+v, want none", bad, got)
		}
	}
	f := Fill{Pool: "p", Member: "p-abcde", UID: "5678"}
	got, ok := ParseFill(map[string]string{common.PoolMemberAnnotation: f.String()})
	if !ok || got != f {
		t.Errorf("ParseFill(%q) = %+v, %v", f.String(), got, ok)
	}
	if _, ok := ParseFill(map[string]string{common.PoolMemberAnnotation: "p/x"}); ok {
		t.Error("ParseFill accepted two parts")
	}
}

// TestFromUnstructured: a member of any kind is read from its shared claim fields; a
// member with no status yet is provisioning; the scheduler's placed-at stamp is read
// when it parses.
func TestFromUnstructured(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "platform.example.org/v1alpha1", "kind": "Queue",
		"metadata": map[string]any{"name": "q-1", "uid": "u1", "generation": int64(2),
			"annotations": map[string]any{common.PoolMemberTakenByAnnotation: "c/u9"}},
		"spec": map[string]any{"classRef": map[string]any{"name": "std"}, "parameters": map[string]any{"size": 3},
			"resourceRef": map[string]any{"kind": "Module", "name": "queue-u1", "namespace": "admin"}},
	}}
	m, err := FromUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	want := Member{Name: "q-1", UID: "u1", State: HandedOut, TakenBy: Taker{Name: "c", UID: "u9"}, ClassRef: "std",
		ResourceRef: &common.ObjectReference{Kind: "Module", Name: "queue-u1", Namespace: "admin"}}
	m.Object, m.Created = nil, want.Created
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("FromUnstructured (-want +got):\n%s", diff)
	}
	delete(u.Object["metadata"].(map[string]any), "annotations")
	if m, err := FromUnstructured(u); err != nil || m.State != Provisioning {
		t.Errorf("no status: %s, %v", m.State, err)
	}
	u.SetAnnotations(map[string]string{common.PlacedAtAnnotation: "2026-12-02T10:00:00Z"})
	if m, err := FromUnstructured(u); err != nil || !m.PlacedAt.Equal(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("placed at: %s, %v; want the annotation's time", m.PlacedAt, err)
	}
	u.SetAnnotations(map[string]string{common.PlacedAtAnnotation: "yesterday"})
	if m, err := FromUnstructured(u); err != nil || !m.PlacedAt.IsZero() {
		t.Errorf("a placed-at that does not parse: %s, %v; want none", m.PlacedAt, err)
	}
}
