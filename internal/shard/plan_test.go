package shard

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var planNow = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

// leasesOf reads one shard Lease per word: "none" (no Lease yet), "free" (let go),
// a holder's name (renewed a second ago), or a name and "!" (expired).
func leasesOf(words string) []*coordinationv1.Lease {
	var out []*coordinationv1.Lease
	for _, w := range strings.Fields(words) {
		switch {
		case w == "none":
			out = append(out, nil)
		case w == "free":
			out = append(out, &coordinationv1.Lease{})
		default:
			renewed := planNow.Add(-time.Second)
			if strings.HasSuffix(w, "!") {
				renewed = planNow.Add(-time.Minute)
			}
			out = append(out, &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To(strings.TrimSuffix(w, "!")), LeaseDurationSeconds: ptr.To(int32(15)),
				RenewTime: &metav1.MicroTime{Time: renewed}}})
		}
	}
	return out
}

// movesOf reads one move per word.
func movesOf(words string) []move {
	var out []move
	for _, w := range strings.Fields(words) {
		for m, name := range moveNames {
			if name == w {
				out = append(out, move(m))
			}
		}
	}
	return out
}

// TestPlan: what replica "a" does with each shard's Lease.
func TestPlan(t *testing.T) {
	idle := holding{}
	busy := holding{inFlight: 1}
	cases := []struct {
		name    string
		leases  string
		held    map[int]holding
		members int
		want    string
	}{{
		name: "alone, it takes every shard", leases: "none none none none", members: 1,
		want: "take take take take",
	}, {
		name: "alone, it keeps every shard", leases: "a a a a", held: map[int]holding{0: idle, 1: idle, 2: idle, 3: idle}, members: 1,
		want: "renew renew renew renew",
	}, {
		name: "with a second replica, it takes only its fair share", leases: "none none none none", members: 2,
		want: "take take stay stay",
	}, {
		name: "an odd number of shards: the fair share rounds up", leases: "none none none none none", members: 2,
		want: "take take take stay stay",
	}, {
		name: "when a replica joins, it lets go of the shards beyond its fair share", leases: "a a a a",
		held: map[int]holding{0: idle, 1: idle, 2: idle, 3: idle}, members: 2,
		want: "release release renew renew",
	}, {
		name: "it never lets go of a shard with runs in flight: it drains it", leases: "a a a a",
		held: map[int]holding{0: busy, 1: idle, 2: idle, 3: idle}, members: 2,
		want: "drain release renew renew",
	}, {
		name: "a draining shard goes once its runs have ended", leases: "a a",
		held: map[int]holding{0: {releasing: true}, 1: idle}, members: 2,
		want: "release renew",
	}, {
		name: "a draining shard keeps draining though the fair share grew back", leases: "a a",
		held: map[int]holding{0: {inFlight: 2, releasing: true}, 1: idle}, members: 1,
		want: "drain renew",
	}, {
		name: "a shard being let go is not replaced by a free one", leases: "a a none",
		held: map[int]holding{0: {inFlight: 1, releasing: true}, 1: idle}, members: 2,
		want: "drain renew stay",
	}, {
		name: "expired Leases are taken over", leases: "b! b! b! b!", members: 1,
		want: "take take take take",
	}, {
		name: "another's live Lease is left alone", leases: "b b none none", members: 2,
		want: "stay stay take take",
	}, {
		name: "another's live Lease is left alone though it holds more than its share", leases: "b b b none", members: 2,
		want: "stay stay stay take",
	}, {
		name: "a free Lease is taken", leases: "free b", members: 2,
		want: "take stay",
	}, {
		name: "its own Lease from before (fenced, or restarted) is taken back", leases: "a a", members: 1,
		want: "take take",
	}, {
		name: "fenced: a shard another replica holds is lost, its runs interrupted", leases: "b a", held: map[int]holding{0: busy, 1: idle}, members: 2,
		want: "lose renew",
	}, {
		name: "a shard lost makes room for a free one", leases: "b none", held: map[int]holding{0: idle}, members: 2,
		want: "lose take",
	}, {
		name: "a held shard whose Lease is gone, free or expired in another's name stays held", leases: "none free b!",
		held: map[int]holding{0: busy, 1: idle, 2: idle}, members: 3,
		want: "take take take",
	}, {
		name: "a drained shard whose Lease is no longer its own just goes", leases: "none b!",
		held: map[int]holding{0: {releasing: true}, 1: {inFlight: 1, releasing: true}}, members: 2,
		want: "release take",
	}, {
		name: "no member Lease read yet counts as alone", leases: "none none", members: 0,
		want: "take take",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := plan("a", leasesOf(tc.leases), tc.held, tc.members, planNow)
			if diff := cmp.Diff(movesOf(tc.want), got); diff != "" {
				t.Errorf("moves (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpired(t *testing.T) {
	cases := []struct {
		name  string
		lease *coordinationv1.Lease
		want  bool
	}{
		{"renewed within its duration", leasesOf("b")[0], false},
		{"not renewed for longer than its duration", leasesOf("b!")[0], true},
		{"never renewed", &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To(int32(15))}}, true},
		{"no duration", &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: planNow}}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := expired(tc.lease, planNow); got != tc.want {
				t.Errorf("expired = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFairShare(t *testing.T) {
	cases := []struct{ shards, members, want int }{{16, 1, 16}, {16, 2, 8}, {16, 3, 6}, {16, 0, 16}, {2, 5, 1}}
	for _, tc := range cases {
		if got := fairShare(tc.shards, tc.members); got != tc.want {
			t.Errorf("fairShare(%d, %d) = %d, want %d", tc.shards, tc.members, got, tc.want)
		}
	}
}
