package claimschema

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NameConflicts says which of the names a kind of group would take (its kind, plural
// and short names) another group serves already, from the API server's discovery (or
// a scheme's kinds, as Served writes them): `kubectl get <name>` would then answer from
// one group only, with no warning. One line per resource of another group.
func NameConflicts(served []*metav1.APIResourceList, group, kind, plural string, shortNames []string) []string {
	mine := map[string]string{strings.ToLower(kind): "kind " + kind, plural: "plural " + plural}
	for _, s := range shortNames {
		mine[s] = "short name " + s
	}
	found := map[string][]string{} // resource → what of mine it takes
	for _, list := range served {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil || gv.Group == group {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // a subresource
			}
			resource := r.Name
			if gv.Group != "" {
				resource += "." + gv.Group
			}
			for _, n := range append([]string{strings.ToLower(r.Kind), r.Name, r.SingularName}, r.ShortNames...) {
				if what, ok := mine[n]; ok && n != "" && !slices.Contains(found[resource], what) {
					found[resource] = append(found[resource], what)
				}
			}
		}
	}
	var out []string
	for resource, what := range found {
		out = append(out, fmt.Sprintf("%s takes the same %s: kubectl would answer from one group only", resource, strings.Join(what, " and ")))
	}
	sort.Strings(out)
	return out
}

// Served lists the kinds a scheme knows as discovery would serve them (plural guessed
// as the API machinery guesses it), so that names can be checked without a cluster.
func Served(kinds map[schema.GroupVersionKind]bool) []*metav1.APIResourceList {
	byGV := map[string]*metav1.APIResourceList{}
	for gvk := range kinds {
		if gvk.Version == "__internal" || strings.HasSuffix(gvk.Kind, "List") || strings.HasSuffix(gvk.Kind, "Options") {
			continue
		}
		gv := gvk.GroupVersion().String()
		if byGV[gv] == nil {
			byGV[gv] = &metav1.APIResourceList{GroupVersion: gv}
		}
		plural, singular := meta.UnsafeGuessKindToResource(gvk)
		byGV[gv].APIResources = append(byGV[gv].APIResources, metav1.APIResource{Name: plural.Resource, SingularName: singular.Resource, Kind: gvk.Kind})
	}
	out := make([]*metav1.APIResourceList, 0, len(byGV))
	for _, l := range byGV {
		out = append(out, l)
	}
	return out
}
