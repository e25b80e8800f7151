package resourcepool

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
)

// Autoscaled is what the scheduler needs of one autoscaled pool of its namespace.
type Autoscaled struct {
	// Name of the pool.
	Name string
	// TemplateLabels are the labels of the members it makes.
	TemplateLabels map[string]string
	// Spec is its autoscale.
	Spec scalingv1.Autoscale
	// Members is how many members it has now (status.clusters).
	Members int32
}

// Candidate is a Ready cluster that matches an application's clusterSelector.
type Candidate struct {
	// Name of the KubernetesCluster claim.
	Name string
	// Pool is the pool it is a member of (its terraplane.io/pool label); empty if none.
	Pool string
	// Load is how many applications are placed on it.
	Load int
}

// WithRoom splits candidates into those that may take one more application and those
// that may not: members of an autoscaled pool (pools, by name) that hold its
// applicationsPerCluster already. Other clusters have no cap.
func WithRoom(candidates []Candidate, pools map[string]Autoscaled) (room, full []Candidate) {
	for _, c := range candidates {
		if p, ok := pools[c.Pool]; ok && c.Load >= int(p.Spec.ApplicationsPerCluster) {
			full = append(full, c)
		} else {
			room = append(room, c)
		}
	}
	return room, full
}

// FullMessage says why no candidate can take the application: each holds its pool's
// applicationsPerCluster.
func FullMessage(full []Candidate, pools map[string]Autoscaled, sel string) string {
	parts := make([]string, 0, len(full))
	for _, c := range full {
		parts = append(parts, fmt.Sprintf("%s (%d of %d, ResourcePool %s)", c.Name, c.Load, pools[c.Pool].Spec.ApplicationsPerCluster, c.Pool))
	}
	sort.Strings(parts)
	return fmt.Sprintf("every KubernetesCluster matching clusterSelector %q holds its pool's applicationsPerCluster applications: %s", sel, strings.Join(parts, ", "))
}

// Growing says which autoscaled pools grow for an application whose clusterSelector is
// sel: those whose members' labels it matches, and whether each has room for a member
// (below max) or not; empty when no pool's members would match.
func Growing(pools []Autoscaled, sel Selector) string {
	if sel == nil {
		return ""
	}
	var parts []string
	for _, p := range pools {
		if !sel.Matches(labels.Set(p.TemplateLabels)) {
			continue
		}
		if p.Members < p.Spec.Max {
			parts = append(parts, fmt.Sprintf("ResourcePool %s is growing for it (%d of at most %d clusters)", p.Name, p.Members, p.Spec.Max))
		} else {
			parts = append(parts, fmt.Sprintf("ResourcePool %s matches but is at its max of %d clusters", p.Name, p.Spec.Max))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}
