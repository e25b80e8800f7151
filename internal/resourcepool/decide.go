package resourcepool

import (
	"hash/fnv"
	"sort"

	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
)

// Counts are a pool's members by state.
type Counts struct {
	Ready, Provisioning, Failed, HandedOut int32
}

// Spare is how many members the pool holds that are not handed out.
func (c Counts) Spare() int32 { return c.Ready + c.Provisioning + c.Failed }

// Reasons of scaling decisions: metrics labels, event reasons and Ready reasons.
const (
	// ReasonBelowSize: fewer spare members than spec.size; the pool makes more.
	ReasonBelowSize = "BelowSize"
	// ReasonAboveSize: more spare members than spec.size; the pool removes some.
	ReasonAboveSize = "AboveSize"
	// ReasonAtMaxSize: below size, but spec.maxSize leaves no room.
	ReasonAtMaxSize = "AtMaxSize"
	// ReasonAtMaxConcurrent: below size, but spec.maxConcurrent members are provisioning.
	ReasonAtMaxConcurrent = "AtMaxConcurrent"
)

// Decision is how many members to make or remove, and why; Held says what stops the
// pool from reaching its size, if anything.
type Decision struct {
	Create, Delete int32
	Reason         string
	Held           string
}

// Decide says how many members to make or remove: make up the spare members to
// spec.size, never past spec.maxSize (which counts the members handed out) nor with more
// than spec.maxConcurrent provisioning; remove the spare members above spec.size.
func Decide(c Counts, spec scalingv1.ResourcePoolSpec) Decision {
	spare := c.Spare()
	if spare > spec.Size {
		return Decision{Delete: spare - spec.Size, Reason: ReasonAboveSize}
	}
	want := spec.Size - spare
	if want == 0 {
		return Decision{}
	}
	d := Decision{Create: want, Reason: ReasonBelowSize}
	if spec.MaxSize != nil {
		if room := max(0, *spec.MaxSize-spare-c.HandedOut); room < d.Create {
			d.Create, d.Held = room, ReasonAtMaxSize
		}
	}
	if spec.MaxConcurrent != nil {
		if room := max(0, *spec.MaxConcurrent-c.Provisioning); room < d.Create {
			d.Create, d.Held = room, ReasonAtMaxConcurrent
		}
	}
	if d.Create == 0 {
		d.Reason = ""
	}
	return d
}

// Count counts members by state, and adds handedOut claims filled from the pool that
// are no longer members.
func Count(members []Member, handedOut int32) Counts {
	c := Counts{HandedOut: handedOut}
	for _, m := range members {
		switch m.State {
		case Ready:
			c.Ready++
		case Provisioning:
			c.Provisioning++
		case Failed:
			c.Failed++
		case HandedOut:
			c.HandedOut++
		}
	}
	return c
}

// ToRemove picks n spare members to remove: failed ones first, then the youngest
// provisioning ones, then the youngest ready ones.
func ToRemove(members []Member, n int32) []Member {
	rank := map[State]int{Failed: 0, Provisioning: 1, Ready: 2}
	var spare []Member
	for _, m := range members {
		if _, ok := rank[m.State]; ok {
			spare = append(spare, m)
		}
	}
	sort.SliceStable(spare, func(i, j int) bool {
		if rank[spare[i].State] != rank[spare[j].State] {
			return rank[spare[i].State] < rank[spare[j].State]
		}
		if !spare[i].Created.Equal(spare[j].Created) {
			return spare[i].Created.After(spare[j].Created)
		}
		return spare[i].Name > spare[j].Name
	})
	return spare[:min(int(n), len(spare))]
}

// HandOutOrder is the order in which a claim tries the ready members: oldest first, the
// list rotated by a hash of the claim's UID, so that claims made together try different
// members first rather than all racing for one. Each try is an update checked against
// the member's resourceVersion; a lost race moves on to the next.
func HandOutOrder(members []Member, claimUID string, class string) []Member {
	var ready []Member
	for _, m := range members {
		if m.State == Ready && (class == "" || m.ClassRef == class) {
			ready = append(ready, m)
		}
	}
	sort.SliceStable(ready, func(i, j int) bool {
		if !ready[i].Created.Equal(ready[j].Created) {
			return ready[i].Created.Before(ready[j].Created)
		}
		return ready[i].Name < ready[j].Name
	})
	if len(ready) < 2 {
		return ready
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(claimUID))
	k := int(h.Sum32() % uint32(len(ready)))
	return append(ready[k:], ready[:k]...)
}
