package classrevision

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

// fleetOf is ten resources a..j that follow new revisions, on r1, Ready and Synced,
// edited by edit (by name).
func fleetOf(edit map[string]func(*member)) []member {
	var out []member
	for _, n := range strings.Split("a b c d e f g h i j", " ") {
		m := member{name: n, key: "team/" + n, want: "r1", runs: "r1", ready: true, automatic: true}
		if e := edit[n]; e != nil {
			e(&m)
		}
		out = append(out, m)
	}
	return out
}

var (
	moving  = func(m *member) { m.want = "r2" }
	moved   = func(m *member) { m.want, m.runs = "r2", "r2" }
	failed  = func(m *member) { m.want, m.failed = "r2", "ApplyFailed: boom" }
	manualM = func(m *member) { m.automatic = false }
)

// TestStep: how one look at the fleet moves a rollout on.
func TestStep(t *testing.T) {
	policy := &common.RolloutPolicy{Canary: ptr.To[int32](2), MaxUnavailable: ptr.To(intstr.FromInt32(3))}
	now := metav1.Now()
	in := rolloutInput{target: "r2", policy: policy, now: now}
	started := func(admitted ...string) *common.RolloutStatus {
		return &common.RolloutStatus{Revision: "r2", StartedAt: now, Wave: int32(min(len(admitted), 1)), Admitted: admitted}
	}
	type want struct {
		Admitted []string
		Wave     int32
		Paused   string
		Skipped  []string
		Updated  int32
		Total    int32
		Done     bool
		Events   []string
	}
	for _, tc := range []struct {
		name  string
		prev  *common.RolloutStatus
		in    func(rolloutInput) rolloutInput
		fleet []member
		want  want
	}{
		{"a new revision starts with the canary", nil, nil, fleetOf(nil),
			want{Admitted: []string{"a", "b"}, Wave: 1, Total: 10, Events: []string{EventRolloutStarted, EventRolloutWave}}},
		{"waves follow the claims' names", nil, nil, fleetOf(map[string]func(*member){"j": func(m *member) { m.key = "team/0" }}),
			want{Admitted: []string{"j", "a"}, Wave: 1, Total: 10, Events: []string{EventRolloutStarted, EventRolloutWave}}},
		{"the canary moving holds the next batch", started("a", "b"), nil, fleetOf(map[string]func(*member){"a": moved, "b": moving}),
			want{Admitted: []string{"a", "b"}, Wave: 1, Updated: 1, Total: 10}},
		{"the canary done lets a batch on", started("a", "b"), nil, fleetOf(map[string]func(*member){"a": moved, "b": moved}),
			want{Admitted: []string{"a", "b", "c", "d", "e"}, Wave: 2, Updated: 2, Total: 10, Events: []string{EventRolloutWave}}},
		{"a failure pauses it", started("a", "b", "c", "d", "e"), nil,
			fleetOf(map[string]func(*member){"a": moved, "b": moved, "c": failed, "d": moved, "e": moved}),
			want{Admitted: []string{"a", "b", "c", "d", "e"}, Wave: 1, Paused: common.ReasonRolloutFailed, Updated: 4, Total: 10, Events: []string{common.TypeRolloutPaused}}},
		{"a resume skips the failing and goes on", &common.RolloutStatus{Revision: "r2", StartedAt: now, Wave: 2, Admitted: []string{"a", "b", "c", "d", "e"}, Paused: common.ReasonRolloutFailed},
			func(in rolloutInput) rolloutInput { in.resumed = "t1"; return in },
			fleetOf(map[string]func(*member){"a": moved, "b": moved, "c": failed, "d": moved, "e": moved}),
			want{Admitted: []string{"a", "b", "c", "d", "e", "f", "g", "h"}, Wave: 3, Skipped: []string{"c"}, Updated: 4, Total: 10, Events: []string{EventRolloutWave}}},
		{"a pause on request holds it", started("a", "b"), func(in rolloutInput) rolloutInput {
			in.policy = &common.RolloutPolicy{Canary: policy.Canary, MaxUnavailable: policy.MaxUnavailable, Paused: true}
			return in
		}, fleetOf(map[string]func(*member){"a": moved, "b": moved}),
			want{Admitted: []string{"a", "b"}, Wave: 1, Paused: common.ReasonRolloutPauseRequested, Updated: 2, Total: 10, Events: []string{common.TypeRolloutPaused}}},
		{"resources that stay are not rolled", nil, nil, fleetOf(map[string]func(*member){"a": manualM, "b": manualM}),
			want{Admitted: []string{"c", "d"}, Wave: 1, Total: 8, Events: []string{EventRolloutStarted, EventRolloutWave}}},
		{"no canary starts with a batch of 25%", nil, func(in rolloutInput) rolloutInput {
			in.policy = &common.RolloutPolicy{Canary: ptr.To[int32](0)}
			return in
		},
			fleetOf(nil), want{Admitted: []string{"a", "b", "c"}, Wave: 1, Total: 10, Events: []string{EventRolloutStarted, EventRolloutWave}}},
		{"another target starts again", &common.RolloutStatus{Revision: "r3", StartedAt: now, Wave: 4, Admitted: []string{"a"}, Paused: common.ReasonRolloutFailed},
			nil, fleetOf(nil), want{Admitted: []string{"a", "b"}, Wave: 1, Total: 10, Events: []string{EventRolloutStarted, EventRolloutWave}}},
		{"every resource on the revision completes it", started("a", "b"), nil,
			fleetOf(map[string]func(*member){"a": moved, "b": moved, "c": moved, "d": moved, "e": moved, "f": moved, "g": moved, "h": moved, "i": moved, "j": moved}),
			want{Admitted: []string{"a", "b"}, Wave: 1, Updated: 10, Total: 10, Done: true, Events: []string{EventRolloutComplete}}},
		{"a revision that reaches no resource completes quietly", nil, nil, nil, want{Done: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			input := in
			if tc.in != nil {
				input = tc.in(in)
			}
			st, notes := step(tc.prev, input, tc.fleet)
			got := want{Admitted: st.Admitted, Wave: st.Wave, Paused: st.Paused, Skipped: st.Skipped, Updated: st.Updated, Total: st.Total, Done: st.CompletedAt != nil}
			for _, n := range notes {
				got.Events = append(got.Events, n.Reason)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if st.Paused == common.ReasonRolloutFailed && !strings.Contains(st.Message, "c (claim team/c; ApplyFailed: boom)") {
				t.Errorf("message %q does not name the failure", st.Message)
			}
			for _, n := range notes {
				if n.Reason == EventRolloutWave && !strings.Contains(n.Message, st.Admitted[len(st.Admitted)-1]+" (claim team/"+st.Admitted[len(st.Admitted)-1]+")") {
					t.Errorf("wave event %q does not name the claims its resources serve", n.Message)
				}
			}
		})
	}
}

// TestWithClaims: a resource that serves a claim is named with it; one that serves none
// by its name alone.
func TestWithClaims(t *testing.T) {
	fleet := []member{{name: "db-1", key: "team/orders"}, {name: "standalone", key: "standalone"}}
	got := withClaims([]string{"db-1", "standalone", "gone"}, fleet)
	if want := []string{"db-1 (claim team/orders)", "standalone", "gone"}; !slices.Equal(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}

// TestRolloutTarget: the latest revision, unless an undo rolled back from it to a
// revision the class still has.
func TestRolloutTarget(t *testing.T) {
	var revs []terraformv1.ClassRevision
	for _, n := range []string{"c-1", "c-2", "c-3"} {
		revs = append(revs, terraformv1.ClassRevision{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	undo := func(from, to string) map[string]string {
		return map[string]string{common.RolloutUndoFromAnnotation: from, common.RolloutUndoToAnnotation: to}
	}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		latest      string
		want        string
	}{
		{"no undo", nil, "c-3", "c-3"},
		{"an undo of the latest", undo("c-3", "c-2"), "c-3", "c-2"},
		{"an undo of an older latest", undo("c-2", "c-1"), "c-3", "c-3"},
		{"an undo to a revision gone", undo("c-3", "c-0"), "c-3", "c-3"},
	} {
		obj := &awsstoragev1.S3BucketClass{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}}
		if got := rolloutTarget(obj, tc.latest, revs); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
