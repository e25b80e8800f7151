package claimdefinition

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// TestDelete: a deleted definition waits for its claims to go, then deletes the CRDs it
// owns (and no other) and lets go of its finalizer.
func TestDelete(t *testing.T) {
	cases := map[string]struct {
		claims     []client.Object
		foreign    bool // the class CRD's name is taken by a CRD the definition does not own
		gone       bool // the definition is gone
		conditions [2]string
		crds       []string // CRDs left
		message    string   // in the Synced message
	}{
		"claims left": {
			claims:     []client.Object{claim("b", nil), claim("a", nil)},
			conditions: [2]string{"False/ClaimsExist", "False/ClaimsExist"},
			crds:       []string{claimCRD, classCRD},
			message:    "2 Network claim(s) still exist (team-a/a, team-a/b)",
		},
		"no claims left": {gone: true},
		"a CRD it does not own stays": {
			foreign: true, gone: true, crds: []string{classCRD},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			h := newHarness(t, append(tc.claims, definition(sizeSchema, ""))...)
			if _, err := h.reconcile(); err != nil {
				t.Fatal(err)
			}
			if tc.foreign {
				c := h.crd(classCRD)
				c.OwnerReferences = nil
				if err := h.c.Update(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			if err := h.c.Delete(ctx, h.def()); err != nil {
				t.Fatal(err)
			}
			if _, err := h.reconcile(); err != nil {
				t.Fatal(err)
			}
			var left []string
			for _, n := range []string{claimCRD, classCRD} {
				if h.crd(n) != nil {
					left = append(left, n)
				}
			}
			d := h.def()
			got := struct {
				Gone       bool
				Conditions [2]string
				CRDs       []string
			}{Gone: d == nil, CRDs: left}
			if d != nil {
				got.Conditions = conditions(d)
				if c := meta.FindStatusCondition(d.Status.Conditions, common.TypeSynced); c == nil || !strings.Contains(c.Message, tc.message) {
					t.Errorf("Synced message %v does not say %q", c, tc.message)
				}
			}
			want := struct {
				Gone       bool
				Conditions [2]string
				CRDs       []string
			}{tc.gone, tc.conditions, tc.crds}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestGoneDefinition: a definition deleted meanwhile is no error.
func TestGoneDefinition(t *testing.T) {
	h := newHarness(t)
	if res, err := h.reconcile(); err != nil || res.RequeueAfter != 0 {
		t.Errorf("reconcile of a missing definition = %v, %v", res, err)
	}
}
