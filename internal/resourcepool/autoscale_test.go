package resourcepool

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
)

// TestDecideAutoscale: how an autoscaled pool grows for waiting applications and
// shrinks when members stand idle.
func TestDecideAutoscale(t *testing.T) {
	now := time.Unix(10_000, 0)
	spec := scalingv1.Autoscale{ApplicationsPerCluster: 2, Min: 0, Max: 3, ScaleDownAfter: &metav1.Duration{Duration: 5 * time.Second}}
	gpu := labels.SelectorFromSet(labels.Set{"pool": "gpu"})
	other := labels.SelectorFromSet(labels.Set{"pool": "cpu"})
	waits := func(name string, sel Selector) Application {
		return Application{Name: name, Selector: sel, Unschedulable: true}
	}
	on := func(name, cluster string) Application {
		return Application{Name: name, Selector: gpu, Cluster: cluster}
	}
	member := func(name string, s State) Member { return Member{Name: name, State: s} }
	row := func(name string, apps int32, ready bool, idle *time.Time) scalingv1.ClusterMember {
		r := scalingv1.ClusterMember{Name: name, Applications: apps, Ready: ready}
		if idle != nil {
			r.IdleSince = &metav1.Time{Time: *idle}
		}
		return r
	}
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	for _, tc := range []struct {
		name string
		in   AutoscaleInput
		want AutoscaleDecision
	}{
		{"nothing waits, nothing there: nothing to do", AutoscaleInput{}, AutoscaleDecision{}},
		{"an application no cluster matches makes one member",
			AutoscaleInput{Applications: []Application{waits("a", gpu)}},
			AutoscaleDecision{Create: 1, Reason: ReasonApplicationsWaiting, For: []string{"a"}, Pending: 1}},
		{"a selector that does not match the template grows nothing",
			AutoscaleInput{Applications: []Application{waits("a", other)}}, AutoscaleDecision{}},
		{"an application naming a ProviderConfig grows nothing",
			AutoscaleInput{Applications: []Application{waits("a", nil)}}, AutoscaleDecision{}},
		{"an application the scheduler has not reported yet grows nothing",
			AutoscaleInput{Applications: []Application{{Name: "a", Selector: gpu}}}, AutoscaleDecision{}},
		{"a provisioning member's room is counted: a second application waits for it",
			AutoscaleInput{Members: []Member{member("m1", Provisioning)}, Applications: []Application{waits("a", gpu), waits("b", gpu)}},
			AutoscaleDecision{Pending: 2, Clusters: []scalingv1.ClusterMember{row("m1", 0, false, nil)}}},
		{"a full member: the third application makes another",
			AutoscaleInput{Members: []Member{member("m1", Ready)}, Applications: []Application{on("a", "m1"), on("b", "m1"), waits("c", gpu)}},
			AutoscaleDecision{Create: 1, Reason: ReasonApplicationsWaiting, For: []string{"c"}, Pending: 1,
				Clusters: []scalingv1.ClusterMember{row("m1", 2, true, nil)}}},
		{"five waiting applications need three members of two",
			AutoscaleInput{Applications: []Application{waits("e", gpu), waits("d", gpu), waits("c", gpu), waits("b", gpu), waits("a", gpu)}},
			AutoscaleDecision{Create: 3, Reason: ReasonApplicationsWaiting, For: []string{"a", "b", "c", "d", "e"}, Pending: 5}},
		{"max caps the members",
			AutoscaleInput{Members: []Member{member("m1", Ready), member("m2", Ready)},
				Applications: []Application{on("a", "m1"), on("b", "m1"), on("c", "m2"), on("d", "m2"), waits("e", gpu), waits("f", gpu), waits("g", gpu)}},
			AutoscaleDecision{Create: 1, Reason: ReasonApplicationsWaiting, For: []string{"e", "f", "g"}, Held: ReasonAtMax, Pending: 3,
				Clusters: []scalingv1.ClusterMember{row("m1", 2, true, nil), row("m2", 2, true, nil)}}},
		{"at max nothing is made",
			AutoscaleInput{Members: []Member{member("m1", Ready), member("m2", Ready), member("m3", Ready)},
				Applications: []Application{on("a", "m1"), on("b", "m1"), on("c", "m2"), on("d", "m2"), on("e", "m3"), on("f", "m3"), waits("g", gpu)}},
			AutoscaleDecision{Held: ReasonAtMax, Pending: 1, Clusters: []scalingv1.ClusterMember{row("m1", 2, true, nil), row("m2", 2, true, nil), row("m3", 2, true, nil)}}},
		{"a failed member keeps its place: a broken class makes no more members",
			AutoscaleInput{Members: []Member{member("m1", Failed)}, Applications: []Application{waits("a", gpu), waits("b", gpu)}},
			AutoscaleDecision{Pending: 2, Clusters: []scalingv1.ClusterMember{row("m1", 0, false, nil)}}},
		{"maxConcurrent holds the members provisioning",
			AutoscaleInput{MaxConcurrent: ptr.To[int32](1), Members: []Member{member("m1", Provisioning)},
				Applications: []Application{waits("a", gpu), waits("b", gpu), waits("c", gpu)}},
			AutoscaleDecision{Pending: 3, Clusters: []scalingv1.ClusterMember{row("m1", 0, false, nil)}}},
		{"min members are kept", AutoscaleInput{Spec: scalingv1.Autoscale{Min: 2, Max: 3}, Members: []Member{member("m1", Provisioning)}},
			AutoscaleDecision{Create: 1, Reason: ReasonBelowMin, Clusters: []scalingv1.ClusterMember{row("m1", 0, false, nil)}}},
		{"an idle member is first seen idle now",
			AutoscaleInput{Members: []Member{member("m1", Ready)}},
			AutoscaleDecision{Clusters: []scalingv1.ClusterMember{row("m1", 0, true, at(0))}, Recheck: 5 * time.Second}},
		{"an idle member keeps its idle time, and is looked at again when it expires",
			AutoscaleInput{Members: []Member{member("m1", Ready)}, IdleSince: map[string]time.Time{"m1": now.Add(-2 * time.Second)}},
			AutoscaleDecision{Clusters: []scalingv1.ClusterMember{row("m1", 0, true, at(-2*time.Second))}, Recheck: 3 * time.Second}},
		{"a member idle for scaleDownAfter is removed",
			AutoscaleInput{Members: []Member{member("m1", Ready), member("m2", Ready)}, Applications: []Application{on("a", "m2")},
				IdleSince: map[string]time.Time{"m1": now.Add(-5 * time.Second), "m2": now.Add(-time.Hour)}},
			AutoscaleDecision{Remove: []Member{member("m1", Ready)}, Reason: ReasonIdle, Clusters: []scalingv1.ClusterMember{row("m2", 1, true, nil)}}},
		{"a member an application was just placed on is busy from then, however long it stood idle",
			AutoscaleInput{Members: []Member{{Name: "m1", State: Ready, PlacedAt: now.Add(-time.Second)}},
				IdleSince: map[string]time.Time{"m1": now.Add(-time.Hour)}},
			AutoscaleDecision{Clusters: []scalingv1.ClusterMember{row("m1", 0, true, at(-time.Second))}, Recheck: 4 * time.Second}},
		{"a placement older than the idle time changes nothing",
			AutoscaleInput{Members: []Member{{Name: "m1", State: Ready, PlacedAt: now.Add(-2 * time.Hour)}},
				IdleSince: map[string]time.Time{"m1": now.Add(-time.Hour)}},
			AutoscaleDecision{Remove: []Member{{Name: "m1", State: Ready, PlacedAt: now.Add(-2 * time.Hour)}}, Reason: ReasonIdle}},
		{"no member is removed below min: the longest idle goes first",
			AutoscaleInput{Spec: scalingv1.Autoscale{Min: 1, Max: 3, ScaleDownAfter: &metav1.Duration{Duration: time.Second}}, Members: []Member{member("m1", Ready), member("m2", Ready)},
				IdleSince: map[string]time.Time{"m1": now.Add(-5 * time.Second), "m2": now.Add(-time.Hour)}},
			AutoscaleDecision{Remove: []Member{member("m2", Ready)}, Reason: ReasonIdle, Clusters: []scalingv1.ClusterMember{row("m1", 0, true, at(-5*time.Second))}}},
		{"while applications wait nothing is removed",
			AutoscaleInput{Members: []Member{member("m1", Ready), member("m2", Provisioning)}, Applications: []Application{waits("a", gpu)},
				IdleSince: map[string]time.Time{"m1": now.Add(-time.Hour)}},
			AutoscaleDecision{Pending: 1, Clusters: []scalingv1.ClusterMember{row("m1", 0, true, at(-time.Hour)), row("m2", 0, false, nil)}}},
		{"an application being deleted still holds its cluster; deleting members count for nothing",
			AutoscaleInput{Members: []Member{member("m1", Ready), member("m0", Deleting)}, Applications: []Application{on("a", "m1")}},
			AutoscaleDecision{Clusters: []scalingv1.ClusterMember{row("m1", 1, true, nil)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			if in.Spec.Max == 0 {
				in.Spec = spec
			}
			in.TemplateLabels, in.Now = map[string]string{"pool": "gpu", "zone": "a"}, now
			got := DecideAutoscale(in)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("DecideAutoscale (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWithRoom: members of an autoscaled pool at applicationsPerCluster are full; other
// clusters have no cap.
func TestWithRoom(t *testing.T) {
	pools := map[string]Autoscaled{"gpu": {Name: "gpu", Spec: scalingv1.Autoscale{ApplicationsPerCluster: 2, Max: 3}}}
	room, full := WithRoom([]Candidate{{Name: "gpu-a", Pool: "gpu", Load: 2}, {Name: "gpu-b", Pool: "gpu", Load: 1}, {Name: "static", Load: 9}, {Name: "sized", Pool: "buckets", Load: 9}}, pools)
	if diff := cmp.Diff([]Candidate{{Name: "gpu-b", Pool: "gpu", Load: 1}, {Name: "static", Load: 9}, {Name: "sized", Pool: "buckets", Load: 9}}, room); diff != "" {
		t.Errorf("room (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Candidate{{Name: "gpu-a", Pool: "gpu", Load: 2}}, full); diff != "" {
		t.Errorf("full (-want +got):\n%s", diff)
	}
	want := `every KubernetesCluster matching clusterSelector "pool=gpu" holds its pool's applicationsPerCluster applications: gpu-a (2 of 2, ResourcePool gpu)`
	if got := FullMessage(full, pools, "pool=gpu"); got != want {
		t.Errorf("FullMessage = %q, want %q", got, want)
	}
}

// TestGrowing: the pools whose members an application's selector matches, below or at max.
func TestGrowing(t *testing.T) {
	pools := []Autoscaled{
		{Name: "gpu", TemplateLabels: map[string]string{"pool": "gpu"}, Spec: scalingv1.Autoscale{Max: 3}, Members: 1},
		{Name: "gpu-full", TemplateLabels: map[string]string{"pool": "gpu", "x": "y"}, Spec: scalingv1.Autoscale{Max: 2}, Members: 2},
		{Name: "cpu", TemplateLabels: map[string]string{"pool": "cpu"}, Spec: scalingv1.Autoscale{Max: 3}},
	}
	for _, tc := range []struct {
		name string
		sel  Selector
		want string
	}{
		{"matching pools, below and at max", labels.SelectorFromSet(labels.Set{"pool": "gpu"}),
			"ResourcePool gpu is growing for it (1 of at most 3 clusters); ResourcePool gpu-full matches but is at its max of 2 clusters"},
		{"no pool matches", labels.SelectorFromSet(labels.Set{"pool": "tpu"}), ""},
		{"no selector (a ProviderConfig)", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Growing(pools, tc.sel); got != tc.want {
				t.Errorf("Growing = %q, want %q", got, tc.want)
			}
		})
	}
}
