package resourcepool

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
)

// TestDecide: how many members a pool makes or removes, given its counts and limits.
func TestDecide(t *testing.T) {
	spec := func(size int32, maxSize, maxConcurrent *int32) scalingv1.ResourcePoolSpec {
		return scalingv1.ResourcePoolSpec{Size: size, MaxSize: maxSize, MaxConcurrent: maxConcurrent}
	}
	for _, tc := range []struct {
		name   string
		counts Counts
		spec   scalingv1.ResourcePoolSpec
		want   Decision
	}{
		{"empty pool fills to size", Counts{}, spec(3, nil, nil), Decision{Create: 3, Reason: ReasonBelowSize}},
		{"full pool does nothing", Counts{Ready: 3}, spec(3, nil, nil), Decision{}},
		{"provisioning and failed members hold their places", Counts{Ready: 1, Provisioning: 1, Failed: 1}, spec(3, nil, nil), Decision{}},
		{"handed out members are replaced", Counts{Ready: 1, HandedOut: 2}, spec(3, nil, nil), Decision{Create: 2, Reason: ReasonBelowSize}},
		{"maxSize counts handed out members", Counts{Ready: 1, HandedOut: 2}, spec(3, ptr.To[int32](4), nil),
			Decision{Create: 1, Reason: ReasonBelowSize, Held: ReasonAtMaxSize}},
		{"at maxSize nothing is made", Counts{Ready: 1, HandedOut: 3}, spec(3, ptr.To[int32](4), nil), Decision{Held: ReasonAtMaxSize}},
		{"past maxSize (lowered) nothing is made", Counts{HandedOut: 9}, spec(3, ptr.To[int32](4), nil), Decision{Held: ReasonAtMaxSize}},
		{"maxConcurrent caps what provisions at once", Counts{}, spec(5, nil, ptr.To[int32](2)), Decision{Create: 2, Reason: ReasonBelowSize, Held: ReasonAtMaxConcurrent}},
		{"maxConcurrent counts members provisioning", Counts{Provisioning: 2}, spec(5, nil, ptr.To[int32](2)), Decision{Held: ReasonAtMaxConcurrent}},
		{"the tighter limit wins", Counts{Provisioning: 1, HandedOut: 1}, spec(5, ptr.To[int32](4), ptr.To[int32](2)),
			Decision{Create: 1, Reason: ReasonBelowSize, Held: ReasonAtMaxConcurrent}},
		{"size lowered removes spare members", Counts{Ready: 4, Failed: 1, HandedOut: 7}, spec(2, nil, nil), Decision{Delete: 3, Reason: ReasonAboveSize}},
		{"size zero empties the pool", Counts{Ready: 2, Provisioning: 1}, spec(0, nil, nil), Decision{Delete: 3, Reason: ReasonAboveSize}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Decide(tc.counts, tc.spec)); diff != "" {
				t.Errorf("Decide(%+v) (-want +got):\n%s", tc.counts, diff)
			}
		})
	}
}

func names(ms []Member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

// TestToRemove: failed members go first, then the youngest provisioning, then the
// youngest ready; handed out and deleting members are never picked.
func TestToRemove(t *testing.T) {
	t0 := time.Unix(1000, 0)
	members := []Member{
		{Name: "ready-old", State: Ready, Created: t0},
		{Name: "ready-new", State: Ready, Created: t0.Add(time.Minute)},
		{Name: "prov-old", State: Provisioning, Created: t0},
		{Name: "prov-new", State: Provisioning, Created: t0.Add(time.Minute)},
		{Name: "failed", State: Failed, Created: t0},
		{Name: "taken", State: HandedOut, Created: t0.Add(time.Hour)},
		{Name: "going", State: Deleting, Created: t0.Add(time.Hour)},
	}
	for _, tc := range []struct {
		n    int32
		want []string
	}{
		{0, nil},
		{1, []string{"failed"}},
		{3, []string{"failed", "prov-new", "prov-old"}},
		{4, []string{"failed", "prov-new", "prov-old", "ready-new"}},
		{9, []string{"failed", "prov-new", "prov-old", "ready-new", "ready-old"}},
	} {
		if diff := cmp.Diff(tc.want, names(ToRemove(members, tc.n))); diff != "" {
			t.Errorf("ToRemove(%d) (-want +got):\n%s", tc.n, diff)
		}
	}
}

// TestHandOutOrder: only ready members (of the claim's class, when it names one) are
// offered, oldest first, rotated per claim so that claims made together start apart.
func TestHandOutOrder(t *testing.T) {
	t0 := time.Unix(1000, 0)
	members := []Member{
		{Name: "c", State: Ready, Created: t0.Add(2 * time.Minute), ClassRef: "std"},
		{Name: "a", State: Ready, Created: t0, ClassRef: "std"},
		{Name: "b", State: Ready, Created: t0.Add(time.Minute), ClassRef: "std"},
		{Name: "p", State: Provisioning, Created: t0},
		{Name: "t", State: HandedOut, Created: t0},
		{Name: "f", State: Failed, Created: t0},
		{Name: "x", State: Ready, Created: t0, ClassRef: "other"},
	}
	rotations := map[string]bool{}
	for _, uid := range []string{"u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8"} {
		got := names(HandOutOrder(members, uid, "std"))
		if len(got) != 3 {
			t.Fatalf("claim %s: order %v, want the three ready std members", uid, got)
		}
		rotations[got[0]] = true
		// Whatever the start, the order is the oldest-first cycle a, b, c.
		next := map[string]string{"a": "b", "b": "c", "c": "a"}
		if got[1] != next[got[0]] || got[2] != next[got[1]] {
			t.Errorf("claim %s: order %v is not a rotation of [a b c]", uid, got)
		}
		if diff := cmp.Diff(got, names(HandOutOrder(members, uid, "std"))); diff != "" {
			t.Errorf("claim %s: the order changes between calls:\n%s", uid, diff)
		}
	}
	if len(rotations) < 2 {
		t.Errorf("eight claims all start at the same member: %v", rotations)
	}
	if got := names(HandOutOrder(members, "u1", "")); len(got) != 4 {
		t.Errorf("a claim naming no class is offered every ready member: %v", got)
	}
	if got := HandOutOrder(members[3:6], "u1", ""); len(got) != 0 {
		t.Errorf("no ready member: %v", names(got))
	}
}
