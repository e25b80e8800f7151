package plandoc

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParsePlan: what either mask marks, on either side of a change, is masked; a text
// equal to a sensitive one, or to a secret, is masked wherever it stands, also inside a
// longer text; whole numbers read as integers; nothing else changes.
func TestParsePlan(t *testing.T) {
	for name, tc := range map[string]struct {
		plan    string
		secrets []string
		want    string
	}{
		"nothing sensitive": {
			plan: `{"resource_changes":[{"address":"a","change":{"before":null,"after":{"name":"x","size":2}}}]}`,
			want: `[{"address":"a","change":{"after":{"name":"x","size":2},"before":null}}]`,
		},
		"a value marked after only is masked before too": {
			plan: `{"resource_changes":[{"address":"a","change":{"before":{"pw":"old-pw"},"after":{"pw":"new-pw"},"after_sensitive":{"pw":true}}}]}`,
			want: `[{"address":"a","change":{"after":{"pw":"(sensitive value)"},"after_sensitive":{"pw":true},"before":{"pw":"(sensitive value)"}}}]`,
		},
		"a sensitive text elsewhere is masked inside other texts": {
			plan: `{"resource_changes":[{"address":"a","change":{"after":{"pw":"hunter22","url":"db://u:hunter22@h"},"after_sensitive":{"pw":true}}}]}`,
			want: `[{"address":"a","change":{"after":{"pw":"(sensitive value)","url":"db://u:(sensitive value)@h"},"after_sensitive":{"pw":true}}}]`,
		},
		"a secret of the workspace is masked; a short one is not": {
			plan:    `{"resource_changes":[{"address":"a","change":{"after":{"token":"s3cr3t-token","tag":"abc"}}}]}`,
			secrets: []string{"s3cr3t-token", "abc"},
			want:    `[{"address":"a","change":{"after":{"tag":"abc","token":"(sensitive value)"}}}]`,
		},
		"nested blocks and lists": {
			plan: `{"resource_changes":[{"address":"a","change":{"after":{"users":[{"name":"app","key":"k-123456"}]},"after_sensitive":{"users":[{"key":true}]}}}]}`,
			want: `[{"address":"a","change":{"after":{"users":[{"key":"(sensitive value)","name":"app"}]},"after_sensitive":{"users":[{"key":true}]}}}]`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			doc, err := ParsePlan([]byte(tc.plan), tc.secrets...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(doc.Changes)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("redacted changes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRedactedReadsBack: a document Redacted keeps parses to the same changes, with no
// sensitive text in it.
func TestRedactedReadsBack(t *testing.T) {
	changes := []any{map[string]any{"address": "a", "change": map[string]any{
		"after": map[string]any{"pw": "topsecret"}, "after_sensitive": map[string]any{"pw": true}}}}
	b, err := Redacted(changes)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatalf("document %q", b)
	}
	doc, err := ParsePlan(b)
	if err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(doc.Changes)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"address":"a","change":{"after":{"pw":"(sensitive value)"},"after_sensitive":{"pw":true}}}]`; string(again) != want {
		t.Errorf("read back %s, want %s", again, want)
	}
}

// TestUnionMask: the union marks what either mask marks, through maps and lists.
func TestUnionMask(t *testing.T) {
	a := map[string]any{"x": true, "l": []any{false, true}}
	b := map[string]any{"y": true, "l": []any{true}}
	want := map[string]any{"x": true, "y": true, "l": []any{true, true}}
	if diff := cmp.Diff(want, UnionMask(a, b)); diff != "" {
		t.Errorf("union (-want +got):\n%s", diff)
	}
	if UnionMask(nil, nil) != false {
		t.Error("the union of no masks marks something")
	}
}

// TestRedact: whole numbers become integers, an entry that is not a change is dropped,
// a change without a "change" object is kept as it is, and of two secrets where one
// holds the other, the longer is masked whole.
func TestRedact(t *testing.T) {
	changes := []any{
		"not a change",
		map[string]any{"address": "a"},
		map[string]any{"address": "b", "change": map[string]any{"after": map[string]any{
			"size": float64(3), "ratio": 1.5, "dsn": "user:secret-long@host"}}},
	}
	got, err := json.Marshal(Redact(changes, "secret", "secret-long"))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"address":"a"},{"address":"b","change":{"after":{"dsn":"user:(sensitive value)@host","ratio":1.5,"size":3}}}]`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("redacted (-want +got):\n%s", diff)
	}
	if size := Redact(changes[2:])[0].(map[string]any)["change"].(map[string]any)["after"].(map[string]any)["size"]; size != int64(3) {
		t.Errorf("size is %T %v, want the integer 3", size, size)
	}
}

// TestParsePlanRefusesBadJSON: a plan that is not JSON is an error, not an empty document.
func TestParsePlanRefusesBadJSON(t *testing.T) {
	if _, err := ParsePlan([]byte("not json")); err == nil {
		t.Error("ParsePlan accepted text that is not JSON")
	}
}
