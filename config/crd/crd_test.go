package crd

import "testing"

// tellApart are the kinds of one name in several groups that users address by hand
// (kubectl patch, edit) and so need names of their own.
var tellApart = map[string]bool{"ProviderConfig": true}

// TestKindsOfOneNameAreTellableApart: kubectl resolves a bare kind name to one group
// only, so the ProviderConfig kinds have short names and a category of their own, and
// no short name or category names two resources.
func TestKindsOfOneNameAreTellableApart(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string][]string{}
	for _, c := range crds {
		groups[c.Spec.Names.Kind] = append(groups[c.Spec.Names.Kind], c.Spec.Group)
	}
	owner := map[string]string{}
	for _, c := range crds {
		n, name := c.Spec.Names, c.Name
		if tellApart[n.Kind] && (len(n.ShortNames) == 0 || len(n.Categories) <= 2) {
			t.Errorf("%s shares its kind with %v but has short names %v and categories %v", name, groups[n.Kind], n.ShortNames, n.Categories)
		}
		for _, s := range n.ShortNames {
			if other, ok := owner[s]; ok {
				t.Errorf("short name %s names both %s and %s", s, other, name)
			}
			owner[s] = name
		}
	}
	for _, c := range crds {
		for _, cat := range c.Spec.Names.Categories {
			if other, ok := owner[cat]; ok && other != c.Name {
				t.Errorf("category %s of %s is the short name of %s", cat, c.Name, other)
			}
		}
	}
}
