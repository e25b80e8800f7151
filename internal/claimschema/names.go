package claimschema

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NameConflicts says which of the names a kind of group would take (its kind, plural
// and short names) another group serves already, from the API server's discovery (or
// a scheme's kinds, as Served writes them): `kubectl get <name>` would then answer from
// one group only, with no warning.
func NameConflicts(served []*metav1.APIResourceList, group, kind, plural string, shortNames []string) []string {
	mine := map[string]string{strings.ToLower(kind): "kind " + kind, plural: "plural " + plural}
	for _, s := range shortNames {
		mine[s] = "short name " + s
	}
	seen := map[string]bool{}
	var out []string
	for _, list := range served {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil || gv.Group == group {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // a subresource
			}
			theirs := append([]string{strings.ToLower(r.Kind), r.Name, r.SingularName}, r.ShortNames...)
			for _, n := range theirs {
				what, ok := mine[n]
				key := what + "|" + gv.Group
				if !ok || n == "" || seen[key] {
					continue
				}
				seen[key] = true
				resource, by := r.Name+"."+gv.Group, fmt.Sprintf("group %s", gv.Group)
				if gv.Group == "" {
					resource, by = r.Name, "the core group"
				}
				out = append(out, fmt.Sprintf("%s is also served by %s (%s): kubectl get %s answers from one of them", what, by, resource, n))
			}
		}
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
