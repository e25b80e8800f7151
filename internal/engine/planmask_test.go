package engine

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	tfjson "github.com/hashicorp/terraform-json"

	"terraplane.io/terraplane/internal/plandoc"
)

// hashed matches what maskSensitive puts in place of a sensitive value.
var hashed = regexp.MustCompile(`^\(sensitive [0-9a-f]{16}\)$`)

// TestMaskSensitive: what the mask marks becomes a keyed hash, what it does not stays,
// and a mask whose shape does not fit the value leaves the value alone.
func TestMaskSensitive(t *testing.T) {
	key := []byte("k")
	h := func(v any) any { return maskSensitive(v, true, key) }
	if !hashed.MatchString(h("hunter2").(string)) {
		t.Fatalf("a sensitive value became %v", h("hunter2"))
	}
	for _, tc := range []struct {
		name    string
		v, mask any
		want    any
	}{
		{"no mask", "x", nil, "x"},
		{"unmarked", "x", false, "x"},
		{"marked", "hunter2", true, h("hunter2")},
		{"a whole object", map[string]any{"a": "1"}, true, h(map[string]any{"a": "1"})},
		{"one attribute", map[string]any{"pw": "hunter2", "n": 1.0}, map[string]any{"pw": true},
			map[string]any{"pw": h("hunter2"), "n": 1.0}},
		{"nested", map[string]any{"db": map[string]any{"pw": "hunter2", "user": "me"}}, map[string]any{"db": map[string]any{"pw": true}},
			map[string]any{"db": map[string]any{"pw": h("hunter2"), "user": "me"}}},
		{"list, shorter mask", []any{"a", "hunter2", "c"}, []any{false, true},
			[]any{"a", h("hunter2"), "c"}},
		{"object mask on a text", "x", map[string]any{"a": true}, "x"},
		{"list mask on an object", map[string]any{"a": "1"}, []any{true}, map[string]any{"a": "1"}},
	} {
		if diff := cmp.Diff(tc.want, maskSensitive(tc.v, tc.mask, key)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if h("a") == h("b") || maskSensitive("a", true, []byte("other")) == h("a") {
		t.Error("the hash must follow both the value and the key")
	}
}

// TestPlanIDFollowsWhatThePlanDoes: the id changes with what the plan does and with a
// sensitive value under the key, and with nothing else.
func TestPlanIDFollowsWhatThePlanDoes(t *testing.T) {
	plan := func(edit func(*tfjson.Plan)) *tfjson.Plan {
		p := &tfjson.Plan{
			ResourceChanges: []*tfjson.ResourceChange{
				managed("a", &tfjson.Change{Actions: acts(tfjson.ActionUpdate), Before: map[string]any{"n": "1", "pw": "old-secret"},
					After: map[string]any{"n": "2", "pw": "new-secret"}, AfterSensitive: map[string]any{"pw": true}}),
			},
			OutputChanges: map[string]*tfjson.Change{"o": {Actions: acts(tfjson.ActionCreate), After: "x"}},
		}
		if edit != nil {
			edit(p)
		}
		return p
	}
	base := planID(plan(nil), []byte("k"), nil)
	for _, tc := range []struct {
		name string
		edit func(*tfjson.Plan)
		key  string
		same bool
	}{
		{name: "the same plan", same: true},
		{name: "another key", key: "other"},
		{name: "a data source read added", same: true, edit: func(p *tfjson.Plan) {
			p.ResourceChanges = append(p.ResourceChanges, &tfjson.ResourceChange{Address: "data.x", Mode: tfjson.DataResourceMode, Change: &tfjson.Change{Actions: acts(tfjson.ActionRead), After: "anything"}})
		}},
		{name: "prior state and planned values differ", same: true, edit: func(p *tfjson.Plan) {
			p.PlannedValues = values([]tfjson.ResourceMode{tfjson.ManagedResourceMode}, nil)
		}},
		{name: "another plain value", edit: func(p *tfjson.Plan) { p.ResourceChanges[0].Change.After.(map[string]any)["n"] = "3" }},
		{name: "another sensitive value", edit: func(p *tfjson.Plan) { p.ResourceChanges[0].Change.After.(map[string]any)["pw"] = "newer-secret" }},
		{name: "another action", edit: func(p *tfjson.Plan) {
			p.ResourceChanges[0].Change.Actions = acts(tfjson.ActionDelete, tfjson.ActionCreate)
		}},
		{name: "an import", edit: func(p *tfjson.Plan) { p.ResourceChanges[0].Change.Importing = &tfjson.Importing{ID: "i-1"} }},
		{name: "an unknown value", edit: func(p *tfjson.Plan) { p.ResourceChanges[0].Change.AfterUnknown = map[string]any{"arn": true} }},
		{name: "another output", edit: func(p *tfjson.Plan) { p.OutputChanges["o"].After = "y" }},
	} {
		key := "k"
		if tc.key != "" {
			key = tc.key
		}
		if got := planID(plan(tc.edit), []byte(key), nil); (got == base) != tc.same {
			t.Errorf("%s: id %s against %s; want the same: %v", tc.name, got, base, tc.same)
		}
	}
	plain := &tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{managed("a", &tfjson.Change{Actions: acts(tfjson.ActionCreate), After: map[string]any{"n": "1"}})}}
	if planID(plain, []byte("k"), nil) != planID(plain, []byte("other"), nil) {
		t.Error("without sensitive values the key must not matter")
	}
}

// TestSpreadSensitivity: a text sensitive anywhere in the plan is masked wherever else it
// appears, unless it is shorter than four characters.
func TestSpreadSensitivity(t *testing.T) {
	p := &tfjson.Plan{
		ResourceChanges: []*tfjson.ResourceChange{
			managed("src", &tfjson.Change{After: map[string]any{"input": "tok-secret", "pin": "123", "list": []any{"deep-secret"}},
				AfterSensitive: map[string]any{"input": true, "pin": true, "list": true}}),
			managed("derived", &tfjson.Change{Before: map[string]any{"output": "tok-secret", "n": "123", "plain": "public"},
				After: map[string]any{"items": []any{"x", "deep-secret"}}}),
			managed("empty", nil),
		},
		OutputChanges: map[string]*tfjson.Change{"o": {After: "tok-secret"}, "none": nil},
	}
	spreadSensitivity(p)
	derived := p.ResourceChanges[1].Change
	if diff := cmp.Diff(map[string]any{"output": true}, derived.BeforeSensitive); diff != "" {
		t.Errorf("before (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"items": []any{false, true}}, derived.AfterSensitive); diff != "" {
		t.Errorf("after (-want +got):\n%s", diff)
	}
	if p.OutputChanges["o"].AfterSensitive != true {
		t.Errorf("output: %v, want it marked", p.OutputChanges["o"].AfterSensitive)
	}

	untouched := &tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{managed("a", &tfjson.Change{After: map[string]any{"a": "public"}})}}
	spreadSensitivity(untouched)
	if untouched.ResourceChanges[0].Change.AfterSensitive != nil {
		t.Error("a plan without secrets had its masks rewritten")
	}
}

// TestCollectAndMarkSecrets: the text leaves under a mark are secrets; marking finds them
// in another value and keeps the marks already there.
func TestCollectAndMarkSecrets(t *testing.T) {
	for _, tc := range []struct {
		name    string
		v, mask any
		want    map[string]bool
	}{
		{"unmarked", map[string]any{"a": "public"}, nil, map[string]bool{}},
		{"a marked leaf", map[string]any{"a": "secret", "b": "public"}, map[string]any{"a": true}, map[string]bool{"secret": true}},
		{"under a marked object", map[string]any{"a": map[string]any{"x": "one-secret", "y": []any{"two-secret"}}}, map[string]any{"a": true},
			map[string]bool{"one-secret": true, "two-secret": true}},
		{"in a list", []any{"public", "list-secret"}, []any{false, true}, map[string]bool{"list-secret": true}},
		{"too short", "abc", true, map[string]bool{}},
		{"not a text", 12345.0, true, map[string]bool{}},
	} {
		got := map[string]bool{}
		plandoc.CollectSecrets(tc.v, tc.mask, false, got)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("collect %s (-want +got):\n%s", tc.name, diff)
		}
	}
	secret := map[string]bool{"s3cr3t": true}
	for _, tc := range []struct {
		name    string
		v, mask any
		want    any
	}{
		{"a secret text", "s3cr3t", nil, true},
		{"another text", "public", nil, nil},
		{"already marked", "public", true, true},
		{"in an object", map[string]any{"a": "s3cr3t", "b": "public"}, nil, map[string]any{"a": true}},
		{"kept marks", map[string]any{"a": "public", "b": "s3cr3t"}, map[string]any{"a": true}, map[string]any{"a": true, "b": true}},
		{"in a list", []any{"public", "s3cr3t"}, nil, []any{false, true}},
		{"a number", 1.0, false, false},
	} {
		if diff := cmp.Diff(tc.want, markSecrets(tc.v, tc.mask, secret)); diff != "" {
			t.Errorf("mark %s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestPlanIDRevealsNoSecret: the document hashed into the id holds no sensitive value,
// and the masked values in it differ when the secrets differ.
func TestPlanIDRevealsNoSecret(t *testing.T) {
	c := &tfjson.Change{Before: map[string]any{"pw": "old-secret"}, After: map[string]any{"pw": "new-secret"},
		BeforeSensitive: map[string]any{"pw": true}}
	sens := unionMask(c.BeforeSensitive, c.AfterSensitive)
	b, _ := json.Marshal([]any{maskSensitive(c.Before, sens, []byte("k")), maskSensitive(c.After, sens, []byte("k"))})
	if strings.Contains(string(b), "secret") {
		t.Errorf("masked change shows a secret: %s", b)
	}
	var pair []map[string]string
	_ = json.Unmarshal(b, &pair)
	if len(pair) != 2 || pair[0]["pw"] == pair[1]["pw"] {
		t.Errorf("masked before and after must differ: %s", b)
	}
}
