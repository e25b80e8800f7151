package plandoc

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMaskEdges: a whole sensitive value is masked whatever its type, a sensitive null
// stays null (there is nothing to hide), a mask shorter than its list leaves the rest,
// and a number is masked where marked but, being no text, masks nothing elsewhere.
func TestMaskEdges(t *testing.T) {
	for name, tc := range map[string]struct{ change, want string }{
		"whole object sensitive": {
			`{"after":{"a":1,"b":"xyzw"},"after_sensitive":true}`,
			`{"after":"(sensitive value)","after_sensitive":true}`},
		"sensitive null": {
			`{"before":null,"after":{"pw":null},"after_sensitive":{"pw":true}}`,
			`{"after":{"pw":null},"after_sensitive":{"pw":true},"before":null}`},
		"short list mask": {
			`{"after":{"l":["aaaa","bbbb","cccc"]},"after_sensitive":{"l":[true]}}`,
			`{"after":{"l":["(sensitive value)","bbbb","cccc"]},"after_sensitive":{"l":[true]}}`},
		"sensitive number": {
			`{"after":{"port":5432,"note":"5432"},"after_sensitive":{"port":true}}`,
			`{"after":{"note":"5432","port":"(sensitive value)"},"after_sensitive":{"port":true}}`},
		"marked before only": {
			`{"before":{"k":"old-key"},"after":{"k":"new-key"},"before_sensitive":{"k":true}}`,
			`{"after":{"k":"(sensitive value)"},"before":{"k":"(sensitive value)"},"before_sensitive":{"k":true}}`},
	} {
		t.Run(name, func(t *testing.T) {
			var ch any
			if err := json.Unmarshal([]byte(tc.change), &ch); err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(Redact([]any{map[string]any{"change": ch}})[0].(map[string]any)["change"])
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, string(got)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestRedactAcrossChanges: a text sensitive in one change is masked in every other
// change of the plan, where nothing marks it.
func TestRedactAcrossChanges(t *testing.T) {
	doc, err := ParsePlan([]byte(`{"resource_changes":[
		{"address":"a","change":{"after":{"pw":"p4ssw0rd"},"after_sensitive":{"pw":true}}},
		{"address":"b","change":{"after":{"user_data":"PASSWORD=p4ssw0rd"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := doc.Changes[1].(map[string]any)["change"].(map[string]any)["after"].(map[string]any)["user_data"]
	if got != "PASSWORD="+SensitiveValue {
		t.Errorf("the other change's text is %q", got)
	}
}

// TestRedactLeavesInputAlone: redaction works on copies: the caller's changes keep their
// values.
func TestRedactLeavesInputAlone(t *testing.T) {
	after := map[string]any{"pw": "topsecret", "n": float64(2)}
	ch := map[string]any{"after": after, "after_sensitive": map[string]any{"pw": true}}
	rc := map[string]any{"address": "a", "change": ch}
	Redact([]any{rc}, "topsecret")
	if after["pw"] != "topsecret" || after["n"] != float64(2) || rc["change"].(map[string]any)["after"].(map[string]any)["pw"] != "topsecret" {
		t.Errorf("the input was changed: %v", rc)
	}
}

// TestCollectSecrets gathers the texts of four characters or more under a mark, however
// deep below it, and nothing unmarked.
func TestCollectSecrets(t *testing.T) {
	v := map[string]any{
		"creds": map[string]any{"user": "admin", "keys": []any{"key-one", "k2"}},
		"name":  "visible",
		"list":  []any{"first-item", "second-item"},
	}
	mask := map[string]any{"creds": true, "list": []any{false, true}}
	got := map[string]bool{}
	CollectSecrets(v, mask, false, got)
	want := map[string]bool{"admin": true, "key-one": true, "second-item": true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("secrets (-want +got):\n%s", d)
	}
}

// TestScrubNumbers: only whole numbers a float64 holds exactly become integers.
func TestScrubNumbers(t *testing.T) {
	r := replacer(nil)
	for in, want := range map[float64]any{
		3: int64(3), -7: int64(-7), 0: int64(0), 2.5: 2.5, 1 << 53: float64(1 << 53), 1e300: 1e300,
	} {
		if got := scrub(in, r); got != want {
			t.Errorf("scrub(%v) = %T %v, want %T %v", in, got, got, want, want)
		}
	}
}
