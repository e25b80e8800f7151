package engine

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	tfjson "github.com/hashicorp/terraform-json"
)

// acts builds terraform's actions.
func acts(a ...tfjson.Action) tfjson.Actions { return tfjson.Actions(a) }

// managed is a managed resource change at addr.
func managed(addr string, c *tfjson.Change) *tfjson.ResourceChange {
	return &tfjson.ResourceChange{Address: addr, Mode: tfjson.ManagedResourceMode, Type: "t", Name: addr, Change: c}
}

// values is a module tree of resources: the root's, then one child module's.
func values(root, child []tfjson.ResourceMode) *tfjson.StateValues {
	mk := func(modes []tfjson.ResourceMode) []*tfjson.StateResource {
		var out []*tfjson.StateResource
		for _, m := range modes {
			out = append(out, &tfjson.StateResource{Mode: m})
		}
		return out
	}
	return &tfjson.StateValues{RootModule: &tfjson.StateModule{Resources: mk(root),
		ChildModules: []*tfjson.StateModule{{Resources: mk(child)}}}}
}

// TestChangeKinds: how a change's actions read, alone and counted.
func TestChangeKinds(t *testing.T) {
	for _, tc := range []struct {
		actions            []string
		importing          bool
		replaces, destroys bool
		counts             Counts
	}{
		{[]string{"create"}, false, false, false, Counts{Add: 1}},
		{[]string{"update"}, false, false, false, Counts{Change: 1}},
		{[]string{"delete"}, false, false, true, Counts{Destroy: 1}},
		{[]string{"delete", "create"}, false, true, true, Counts{Replace: 1}},
		{[]string{"create", "delete"}, false, true, true, Counts{Replace: 1}},
		{[]string{"no-op"}, true, false, false, Counts{Import: 1}},
		{[]string{"update"}, true, false, false, Counts{Change: 1, Import: 1}},
		{[]string{"read"}, false, false, false, Counts{}},
	} {
		c := Change{Address: "a", Actions: tc.actions, Importing: tc.importing}
		if c.Replaces() != tc.replaces || c.Destroys() != tc.destroys {
			t.Errorf("%v: replaces %v, destroys %v; want %v, %v", tc.actions, c.Replaces(), c.Destroys(), tc.replaces, tc.destroys)
		}
		if got := CountChanges([]Change{c}); got != tc.counts {
			t.Errorf("%v importing %v: counts %+v, want %+v", tc.actions, tc.importing, got, tc.counts)
		}
	}
}

// TestCountsString: the totals read +add ~change -destroy, with replacements and imports
// only when there are any.
func TestCountsString(t *testing.T) {
	for _, tc := range []struct {
		c    Counts
		want string
	}{
		{Counts{}, "+0 ~0 -0"},
		{Counts{Add: 3, Change: 2, Destroy: 1}, "+3 ~2 -1"},
		{Counts{Replace: 2}, "+0 ~0 -0 -/+2"},
		{Counts{Import: 4}, "+0 ~0 -0 <=4"},
		{Counts{Add: 1, Replace: 1, Import: 1}, "+1 ~0 -0 -/+1 <=1"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
}

// TestDescribePlanTable: which resource changes a plan lists, whether outputs change, and
// the resource counts before and after.
func TestDescribePlanTable(t *testing.T) {
	imported := &tfjson.Importing{ID: "i-1"}
	for _, tc := range []struct {
		name          string
		plan          tfjson.Plan
		changes       []Change
		outputs       bool
		after, before int
		gone          []string
	}{
		{name: "empty"},
		{name: "a create, counted in planned values",
			plan: tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{managed("a", &tfjson.Change{Actions: acts(tfjson.ActionCreate)})},
				PlannedValues: values([]tfjson.ResourceMode{tfjson.ManagedResourceMode, tfjson.DataResourceMode}, []tfjson.ResourceMode{tfjson.ManagedResourceMode})},
			changes: []Change{{Address: "a", Actions: []string{"create"}}}, after: 2},
		{name: "reads, no-ops, data sources and empty changes left out",
			plan: tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{
				managed("read", &tfjson.Change{Actions: acts(tfjson.ActionRead)}),
				managed("same", &tfjson.Change{Actions: acts(tfjson.ActionNoop)}),
				managed("none", nil),
				{Address: "data.x", Mode: tfjson.DataResourceMode, Change: &tfjson.Change{Actions: acts(tfjson.ActionUpdate)}},
			}}},
		{name: "an import without changes is listed",
			plan:    tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{managed("imp", &tfjson.Change{Actions: acts(tfjson.ActionNoop), Importing: imported})}},
			changes: []Change{{Address: "imp", Actions: []string{"no-op"}, Importing: true}}},
		{name: "a replacement keeps terraform's order of actions",
			plan:    tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{managed("r", &tfjson.Change{Actions: acts(tfjson.ActionCreate, tfjson.ActionDelete)})}},
			changes: []Change{{Address: "r", Actions: []string{"create", "delete"}}}},
		{name: "prior state counted",
			plan: tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{managed("d", &tfjson.Change{Actions: acts(tfjson.ActionDelete)})},
				PriorState: &tfjson.State{Values: values([]tfjson.ResourceMode{tfjson.ManagedResourceMode}, []tfjson.ResourceMode{tfjson.ManagedResourceMode, tfjson.DataResourceMode})}},
			changes: []Change{{Address: "d", Actions: []string{"delete"}}}, before: 2},
		{name: "objects the refresh found deleted outside terraform are gone; other drift is not",
			plan: tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{managed("b", &tfjson.Change{Actions: acts(tfjson.ActionCreate)})},
				ResourceDrift: []*tfjson.ResourceChange{
					managed("b", &tfjson.Change{Actions: acts(tfjson.ActionDelete)}),
					managed("tags", &tfjson.Change{Actions: acts(tfjson.ActionUpdate)}),
					{Address: "data.d", Mode: tfjson.DataResourceMode, Change: &tfjson.Change{Actions: acts(tfjson.ActionDelete)}},
					nil, managed("none", nil),
				}},
			changes: []Change{{Address: "b", Actions: []string{"create"}}}, gone: []string{"b"}},
		{name: "an output change",
			plan: tfjson.Plan{OutputChanges: map[string]*tfjson.Change{"same": {Actions: acts(tfjson.ActionNoop)}, "gone": nil,
				"new": {Actions: acts(tfjson.ActionCreate)}}},
			outputs: true},
		{name: "outputs that stay",
			plan: tfjson.Plan{OutputChanges: map[string]*tfjson.Change{"same": {Actions: acts(tfjson.ActionNoop)}}}},
	} {
		p := describePlan(&tc.plan, []byte("k"), nil)
		if diff := cmp.Diff(tc.changes, p.Changes); diff != "" {
			t.Errorf("%s: changes (-want +got):\n%s", tc.name, diff)
		}
		if p.OutputsChange != tc.outputs || p.Resources != tc.after || p.PriorResources != tc.before {
			t.Errorf("%s: outputs change %v, resources %d after %d before; want %v, %d, %d", tc.name, p.OutputsChange, p.Resources, p.PriorResources, tc.outputs, tc.after, tc.before)
		}
		if diff := cmp.Diff(tc.gone, p.Gone); diff != "" {
			t.Errorf("%s: gone (-want +got):\n%s", tc.name, diff)
		}
		if p.HasChanges() != (len(tc.changes) > 0 || tc.outputs) || len(p.ID) != 16 {
			t.Errorf("%s: has changes %v, id %q", tc.name, p.HasChanges(), p.ID)
		}
	}
}

// TestDestructive: only deletions and replacements are destructive.
func TestDestructive(t *testing.T) {
	p := &Plan{Changes: []Change{
		{Address: "add", Actions: []string{"create"}},
		{Address: "del", Actions: []string{"delete"}},
		{Address: "upd", Actions: []string{"update"}},
		{Address: "rep", Actions: []string{"delete", "create"}},
	}}
	var got []string
	for _, c := range p.Destructive() {
		got = append(got, c.Address)
	}
	if diff := cmp.Diff([]string{"del", "rep"}, got); diff != "" {
		t.Errorf("destructive (-want +got):\n%s", diff)
	}
	if (&Plan{}).HasChanges() || !(&Plan{OutputsChange: true}).HasChanges() {
		t.Error("a plan has changes when it changes resources or outputs")
	}
}

// TestChangesID: the same changes, the same id; any difference, another.
func TestChangesID(t *testing.T) {
	base := []Change{{Address: "a", Actions: []string{"create"}}, {Address: "b", Actions: []string{"create"}}}
	if ChangesID(base) != ChangesID([]Change{{Address: "a", Actions: []string{"create"}}, {Address: "b", Actions: []string{"create"}}}) {
		t.Error("equal changes got different ids")
	}
	for name, other := range map[string][]Change{
		"another address": {{Address: "a", Actions: []string{"create"}}, {Address: "c", Actions: []string{"create"}}},
		"another order":   {base[1], base[0]},
		"an import":       {{Address: "a", Actions: []string{"create"}, Importing: true}, base[1]},
		"fewer":           base[:1],
	} {
		if id := ChangesID(other); id == ChangesID(base) || len(id) != 16 {
			t.Errorf("%s: id %q", name, id)
		}
	}
}

// TestIsStale: terraform's refusal of a saved plan reads as stale; other errors do not.
func TestIsStale(t *testing.T) {
	for text, want := range map[string]bool{
		"Error: Saved plan is stale\n\nThe given plan file can no longer be applied": true,
		"Error: Failed to load plan": false,
	} {
		if got := isStale(errors.New(text)); got != want {
			t.Errorf("isStale(%q) = %v, want %v", text, got, want)
		}
	}
}
