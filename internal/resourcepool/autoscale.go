package resourcepool

import (
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
)

// Reasons of autoscaling decisions: metrics labels, event reasons and Ready reasons.
const (
	// ReasonApplicationsWaiting: applications the pool's clusters would match wait for a
	// cluster, and the members have no room for them; the pool adds members.
	ReasonApplicationsWaiting = "ApplicationsWaiting"
	// ReasonBelowMin: fewer members than autoscale.min; the pool adds members.
	ReasonBelowMin = "BelowMin"
	// ReasonIdle: a member held no application for autoscale.scaleDownAfter; it is removed.
	ReasonIdle = "Idle"
	// ReasonAtMax: applications wait, but autoscale.max leaves no room for a member.
	ReasonAtMax = "AtMax"
)

// DefaultScaleDownAfter is how long a member stands idle before it is removed when
// autoscale.scaleDownAfter is unset (the CRD defaults it to the same).
const DefaultScaleDownAfter = 10 * time.Minute

// Selector says whether a cluster's labels match an application's clusterSelector; a
// labels.Selector is one.
type Selector interface {
	Matches(labels.Labels) bool
}

// Application is what the autoscaler knows of one KubernetesApplication of the pool's
// namespace.
type Application struct {
	// Name of the application.
	Name string
	// Selector is its clusterSelector; nil when it names a ProviderConfig instead, and
	// no pool grows for it.
	Selector Selector
	// Cluster is the KubernetesCluster claim (in the pool's namespace) it is placed on;
	// empty while it waits.
	Cluster string
	// Unschedulable is set when the scheduler reported that no cluster can take it.
	Unschedulable bool
}

// Wants reports whether the application waits for a cluster that a member made from
// template labels would give it.
func (a Application) Wants(template map[string]string) bool {
	return a.Cluster == "" && a.Unschedulable && a.Selector != nil && a.Selector.Matches(labels.Set(template))
}

// AutoscaleInput is everything one autoscaling decision looks at.
type AutoscaleInput struct {
	// Spec is the pool's autoscale, TemplateLabels its claim template's labels.
	Spec           scalingv1.Autoscale
	TemplateLabels map[string]string
	// MaxConcurrent is the pool's spec.maxConcurrent; nil: no limit.
	MaxConcurrent *int32
	// Members are the pool's members.
	Members []Member
	// Applications are the namespace's applications.
	Applications []Application
	// IdleSince is, by member name, when the pool's last status saw it idle.
	IdleSince map[string]time.Time
	// Now is the time of the decision.
	Now time.Time
}

// AutoscaleDecision is what an autoscaled pool does now, and what its status says.
type AutoscaleDecision struct {
	// Create is how many members to make, and Reason why.
	Create int32
	Reason string
	// For names the waiting applications the new members are made for, sorted.
	For []string
	// Remove are the idle members to delete (through their class's reclaim policy).
	Remove []Member
	// Held says what stops the pool from making members that applications wait for.
	Held string
	// Clusters are the status rows of the members kept, by name.
	Clusters []scalingv1.ClusterMember
	// Pending counts the applications waiting for a cluster the pool would make.
	Pending int32
	// Recheck is how soon an idle member becomes removable; zero when none will.
	Recheck time.Duration
}

// DecideAutoscale says how an autoscaled pool grows or shrinks:
//   - the members' room is applicationsPerCluster less the applications each holds,
//     counted over every member: a failed one keeps its place, as in any pool, so a
//     broken class does not make members up to max (delete it to have it replaced);
//   - applications waiting for a cluster the template would match, beyond that room,
//     need ceil(waiting/applicationsPerCluster) members, and at least min are kept;
//     never more than max members, nor more than maxConcurrent provisioning;
//   - a Ready member that has held no application for scaleDownAfter is removed while
//     the pool has more than min members and no application waits: the longest idle first.
func DecideAutoscale(in AutoscaleInput) AutoscaleDecision {
	per := max(1, in.Spec.ApplicationsPerCluster)
	after := DefaultScaleDownAfter
	if in.Spec.ScaleDownAfter != nil {
		after = in.Spec.ScaleDownAfter.Duration
	}
	load := map[string]int32{}
	var waiting []string
	for _, a := range in.Applications {
		if a.Cluster != "" {
			load[a.Cluster]++
		} else if a.Wants(in.TemplateLabels) {
			waiting = append(waiting, a.Name)
		}
	}
	sort.Strings(waiting)
	d := AutoscaleDecision{Pending: int32(len(waiting))}

	var live []Member
	var room, provisioning int32
	for _, m := range in.Members {
		if m.State == Deleting || m.State == HandedOut {
			continue
		}
		live = append(live, m)
		if m.State == Provisioning {
			provisioning++
		}
		room += max(0, per-load[m.Name]) // a failed member keeps its place, as in any pool
	}
	n := int32(len(live))

	need := int32(0)
	if unmet := d.Pending - room; unmet > 0 {
		need, d.Reason, d.For = (unmet+per-1)/per, ReasonApplicationsWaiting, waiting
	}
	if below := in.Spec.Min - n; below > need {
		need = below
		if d.Reason == "" {
			d.Reason = ReasonBelowMin
		}
	}
	d.Create = need
	if capacity := max(0, in.Spec.Max-n); capacity < d.Create {
		d.Create, d.Held = capacity, ReasonAtMax
	}
	if in.MaxConcurrent != nil {
		d.Create = min(d.Create, max(0, *in.MaxConcurrent-provisioning))
	}
	if d.Create == 0 {
		d.Reason, d.For = "", nil
	}

	type idle struct {
		m     Member
		since time.Time
	}
	var removable []idle
	sort.SliceStable(live, func(i, j int) bool { return live[i].Name < live[j].Name })
	for _, m := range live {
		row := scalingv1.ClusterMember{Name: m.Name, Applications: load[m.Name], Ready: m.State == Ready}
		if m.State == Ready && load[m.Name] == 0 {
			since, ok := in.IdleSince[m.Name]
			if !ok || since.After(in.Now) {
				since = in.Now
			}
			if m.PlacedAt.After(since) { // an application is being placed on it: busy from then
				since = m.PlacedAt
				if since.After(in.Now) {
					since = in.Now
				}
			}
			row.IdleSince = &metav1.Time{Time: since}
			if left := since.Add(after).Sub(in.Now); left <= 0 {
				removable = append(removable, idle{m, since})
			} else if d.Recheck == 0 || left < d.Recheck {
				d.Recheck = left
			}
		}
		d.Clusters = append(d.Clusters, row)
	}
	if d.Pending > 0 || d.Create > 0 {
		return d
	}
	sort.SliceStable(removable, func(i, j int) bool { return removable[i].since.Before(removable[j].since) })
	for _, r := range removable[:min(len(removable), int(max(0, n-in.Spec.Min)))] {
		d.Remove = append(d.Remove, r.m)
	}
	if len(d.Remove) > 0 {
		d.Reason = ReasonIdle
		gone := map[string]bool{}
		for _, m := range d.Remove {
			gone[m.Name] = true
		}
		kept := d.Clusters[:0]
		for _, row := range d.Clusters {
			if !gone[row.Name] {
				kept = append(kept, row)
			}
		}
		d.Clusters = kept
	}
	return d
}
