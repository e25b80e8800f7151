package claimschema

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestNameConflicts: a kind, plural or short name another group serves is named, once
// per group; the definition's own group, and subresources, are not conflicts.
func TestNameConflicts(t *testing.T) {
	served := []*metav1.APIResourceList{
		{GroupVersion: "database.terraplane.io/v1alpha1", APIResources: []metav1.APIResource{
			{Name: "databases", SingularName: "database", Kind: "Database"},
			{Name: "databases/status", Kind: "Database"}}},
		{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "services", SingularName: "service", Kind: "Service", ShortNames: []string{"svc"}}}},
		{GroupVersion: "platform.example.org/v1alpha1", APIResources: []metav1.APIResource{{Name: "databases", SingularName: "database", Kind: "Database"}}},
	}
	cases := map[string]struct {
		kind, plural string
		short        []string
		want         []string
	}{
		"a kind and plural taken": {"Database", "databases", nil, []string{
			"databases.database.terraplane.io takes the same kind Database and plural databases: kubectl would answer from one group only"}},
		"a short name taken by a core kind": {"Gateway", "gateways", []string{"svc"}, []string{
			"services takes the same short name svc: kubectl would answer from one group only"}},
		"free names": {"Network", "networks", []string{"net"}, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := NameConflicts(served, "platform.example.org", tc.kind, tc.plural, tc.short)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServedFromAScheme: a scheme's kinds are served under the plural the API machinery
// guesses, lists and internal versions left out.
func TestServedFromAScheme(t *testing.T) {
	lists := Served(map[schema.GroupVersionKind]bool{
		{Group: "database.terraplane.io", Version: "v1alpha1", Kind: "Database"}:     true,
		{Group: "database.terraplane.io", Version: "v1alpha1", Kind: "DatabaseList"}: true,
		{Group: "database.terraplane.io", Version: "__internal", Kind: "Database"}:   true,
	})
	got := NameConflicts(lists, "platform.example.org", "Database", "databases", nil)
	if len(got) != 1 || !strings.Contains(got[0], "databases.database.terraplane.io takes the same kind Database and plural databases") {
		t.Errorf("conflicts = %q, want the kind and the plural", got)
	}
}
