package backendproxy

import (
	"maps"
	"net/url"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// The labels terraform's kubernetes backend puts on a state Secret, named
// tfstate-<workspace>-<suffix>.
const (
	stateLabel     = "tfstate"
	suffixLabel    = "tfstateSecretSuffix"
	workspaceLabel = "tfstateWorkspace"
)

// narrow is query with a field selector on the state Secret's name added, when path and
// query are a LIST of Secrets that selects one workspace's state by its labels and by
// nothing else: the API server then reads that one Secret instead of going through the
// namespace. The Secrets such a LIST returns are the same, as terraform names every
// state Secret it writes after the labels it gives it.
func narrow(path string, query url.Values) url.Values {
	if !listPath.MatchString(path) || query.Has("fieldSelector") || query.Get("watch") == "true" || query.Get("watch") == "1" {
		return query
	}
	sel, err := labels.Parse(query.Get("labelSelector"))
	if err != nil {
		return query
	}
	reqs, selectable := sel.Requirements()
	if !selectable {
		return query
	}
	state := true // a selector may leave out the tfstate label, never set it otherwise
	var suffix, workspace string
	for _, r := range reqs {
		v, ok := single(r)
		switch {
		case !ok:
		case r.Key() == stateLabel:
			state = v == "true"
		case r.Key() == suffixLabel:
			suffix = v
		case r.Key() == workspaceLabel:
			workspace = v
		}
	}
	if !state || suffix == "" || workspace == "" {
		return query
	}
	narrowed := maps.Clone(query)
	narrowed.Set("fieldSelector", fields.OneTermEqualSelector("metadata.name", "tfstate-"+workspace+"-"+suffix).String())
	return narrowed
}

// single is the one value r requires its label to equal.
func single(r labels.Requirement) (string, bool) {
	switch r.Operator() {
	case selection.Equals, selection.DoubleEquals, selection.In:
		if vals := r.Values(); vals.Len() == 1 {
			return vals.UnsortedList()[0], true
		}
	}
	return "", false
}
