package engine

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	tfjson "github.com/hashicorp/terraform-json"
)

// TestLiteral: values as HCL writes them.
func TestLiteral(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{"a \"b\"", `"a \"b\""`},
		{true, "true"},
		{12.0, "12"},
		{0.5, "0.5"},
		{1e21, "1000000000000000000000"},
		{[]any{"a", 1.0}, `["a",1]`},
		{map[string]any{"b": 1.0, "a": "x"}, `{"a":"x","b":1}`},
		{func() {}, "0x"},
	} {
		got := literal(tc.v)
		if tc.want == "0x" {
			if !strings.HasPrefix(got, "0x") {
				t.Errorf("literal(func) = %q, want what fmt prints", got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("literal(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestShown: unknown wins over sensitive, sensitive anywhere inside masks the whole value.
func TestShown(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		v, sensitive, unknown any
		want                  string
	}{
		{"plain", "x", nil, nil, `"x"`},
		{"unknown", nil, nil, true, unknownValue},
		{"unknown and sensitive", nil, true, true, unknownValue},
		{"sensitive", "x", true, nil, sensitiveValue},
		{"sensitive inside", map[string]any{"a": "x", "b": "y"}, map[string]any{"b": true}, nil, sensitiveValue},
		{"unknown inside shows what is known", map[string]any{"a": "x"}, nil, map[string]any{"b": true}, `{"a":"x"}`},
		{"unmarked mask", "x", map[string]any{"a": false}, false, `"x"`},
	} {
		if got := shown(tc.v, tc.sensitive, tc.unknown); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestUnionMask: a mark on either side marks the union.
func TestUnionMask(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b any
		want any
	}{
		{"neither", nil, nil, false},
		{"falses", false, false, false},
		{"a whole", true, map[string]any{"x": false}, true},
		{"b whole", map[string]any{"x": true}, true, true},
		{"objects merge", map[string]any{"x": true}, map[string]any{"y": true}, map[string]any{"x": true, "y": true}},
		{"object and nothing", map[string]any{"x": true}, nil, map[string]any{"x": true}},
		{"nested", map[string]any{"o": map[string]any{"p": true}}, map[string]any{"o": map[string]any{"q": true}},
			map[string]any{"o": map[string]any{"p": true, "q": true}}},
		{"lists of different lengths", []any{true}, []any{false, true}, []any{true, true}},
	} {
		if diff := cmp.Diff(tc.want, unionMask(tc.a, tc.b)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestContainsTrue: whether a mask marks anything, however deep.
func TestContainsTrue(t *testing.T) {
	for _, tc := range []struct {
		mask any
		want bool
	}{
		{nil, false}, {false, false}, {true, true},
		{map[string]any{"a": false}, false},
		{map[string]any{"a": map[string]any{"b": []any{false, true}}}, true},
		{[]any{false, false}, false},
		{"true", false},
	} {
		if got := containsTrue(tc.mask); got != tc.want {
			t.Errorf("containsTrue(%v) = %v, want %v", tc.mask, got, tc.want)
		}
	}
}

// TestReplacePathsAndKeys: the top-level attributes that force a replacement, and the
// sorted attribute names of a change.
func TestReplacePathsAndKeys(t *testing.T) {
	got := replacePaths([]any{[]any{"bucket"}, []any{"tags", "a"}, []any{}, []any{0.0}, "odd"})
	if diff := cmp.Diff(map[string]bool{"bucket": true, "tags": true}, got); diff != "" {
		t.Errorf("replacePaths (-want +got):\n%s", diff)
	}
	keys := attributeKeys(map[string]any{"b": 1, "a": 1}, nil, map[string]any{"c": true, "a": true})
	if diff := cmp.Diff([]string{"a", "b", "c"}, keys); diff != "" {
		t.Errorf("attributeKeys (-want +got):\n%s", diff)
	}
	if plural(1) != "" || plural(0) != "s" || plural(2) != "s" {
		t.Error("plural")
	}
}

// TestRenderResource: each kind of change is written as terraform writes it.
func TestRenderResource(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change tfjson.Change
		want   string
	}{
		{"create", tfjson.Change{Actions: acts(tfjson.ActionCreate), After: map[string]any{"name": "a", "gone": nil},
			AfterUnknown: map[string]any{"id": true}},
			"  # r will be created\n  + resource \"t\" \"r\" {\n      + id   = (known after apply)\n      + name = \"a\"\n    }\n"},
		{"destroy", tfjson.Change{Actions: acts(tfjson.ActionDelete), Before: map[string]any{"name": "a", "none": nil}},
			"  # r will be destroyed\n  - resource \"t\" \"r\" {\n      - name = \"a\" -> null\n    }\n"},
		{"update", tfjson.Change{Actions: acts(tfjson.ActionUpdate), Before: map[string]any{"a": "1", "b": "2", "c": "3", "d": nil},
			After: map[string]any{"a": "1", "b": "9", "d": "4"}},
			"  # r will be updated in-place\n  ~ resource \"t\" \"r\" {\n      ~ b = \"2\" -> \"9\"\n      - c = \"3\" -> null\n      + d = \"4\"\n        # (1 unchanged attribute hidden)\n    }\n"},
		{"create before destroy", tfjson.Change{Actions: acts(tfjson.ActionCreate, tfjson.ActionDelete), Before: map[string]any{"n": "a"},
			After: map[string]any{"n": "b"}, ReplacePaths: []any{[]any{"n"}}},
			"  # r must be replaced\n+/- resource \"t\" \"r\" {\n      ~ n = \"a\" -> \"b\" # forces replacement\n    }\n"},
		{"import with an update", tfjson.Change{Actions: acts(tfjson.ActionUpdate), Importing: &tfjson.Importing{ID: "i"},
			Before: map[string]any{"a": "1", "b": "x"}, After: map[string]any{"a": "1", "b": "x"}},
			"  # r will be updated in-place, after being imported\n  ~ resource \"t\" \"r\" {\n        # (2 unchanged attributes hidden)\n    }\n"},
		{"a value that became sensitive", tfjson.Change{Actions: acts(tfjson.ActionUpdate), Before: map[string]any{"o": "plain-before"},
			After: map[string]any{"o": "secret-after"}, AfterSensitive: map[string]any{"o": true}},
			"  # r will be updated in-place\n  ~ resource \"t\" \"r\" {\n      ~ o = (sensitive value) -> (sensitive value)\n    }\n"},
	} {
		var b strings.Builder
		c := tc.change
		renderResource(&b, &tfjson.ResourceChange{Address: "r", Type: "t", Name: "r", Change: &c})
		if diff := cmp.Diff("\n"+tc.want, b.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestRenderOutputs: output changes sorted by name, masked and unknown values shown as
// placeholders, and nothing when no output changes.
func TestRenderOutputs(t *testing.T) {
	var b strings.Builder
	renderOutputs(&b, map[string]*tfjson.Change{
		"same":   {Actions: acts(tfjson.ActionNoop), Before: "x", After: "x"},
		"nil":    nil,
		"b_new":  {Actions: acts(tfjson.ActionCreate), After: nil, AfterUnknown: true},
		"c_gone": {Actions: acts(tfjson.ActionDelete), Before: 3.0},
		"a_pw":   {Actions: acts(tfjson.ActionUpdate), Before: "old-pw", After: "new-pw", BeforeSensitive: true},
	})
	want := "\nChanges to Outputs:\n  ~ a_pw = (sensitive value) -> (sensitive value)\n  + b_new = (known after apply)\n  - c_gone = 3 -> null\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	b.Reset()
	renderOutputs(&b, map[string]*tfjson.Change{"same": {Actions: acts(tfjson.ActionNoop)}})
	if b.Len() != 0 {
		t.Errorf("no output changes wrote %q", b.String())
	}
}

// TestRenderPlanTotals: the totals count a replacement as one add and one destroy, and
// imports only when there are any.
func TestRenderPlanTotals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes []*tfjson.ResourceChange
		want    string
	}{
		{"nothing", nil, "Plan: 0 to add, 0 to change, 0 to destroy.\n"},
		{"a replacement and an update", []*tfjson.ResourceChange{
			managed("a", &tfjson.Change{Actions: acts(tfjson.ActionDelete, tfjson.ActionCreate)}),
			managed("b", &tfjson.Change{Actions: acts(tfjson.ActionUpdate)}),
			managed("c", &tfjson.Change{Actions: acts(tfjson.ActionNoop)}),
		}, "Plan: 1 to add, 1 to change, 1 to destroy.\n"},
		{"an import", []*tfjson.ResourceChange{managed("i", &tfjson.Change{Actions: acts(tfjson.ActionNoop), Importing: &tfjson.Importing{ID: "x"}})},
			"Plan: 0 to add, 0 to change, 0 to destroy, 1 to import.\n"},
	} {
		text := RenderPlan(&tfjson.Plan{ResourceChanges: tc.changes})
		if !strings.HasPrefix(text, "Terraform will perform the following actions:\n") || !strings.HasSuffix(text, "\n"+tc.want) {
			t.Errorf("%s: plan text\n%s\nwant it to end with %q", tc.name, text, tc.want)
		}
	}
}
