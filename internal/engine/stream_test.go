package engine

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseUIStream: from a -json run's lines, the error diagnostics, the planned
// changes (no-ops only when importing), the change summary and the outputs, whether
// every output came with its value; lines that are not JSON are skipped.
func TestParseUIStream(t *testing.T) {
	change := func(addr, action, importing string) string {
		imp := ""
		if importing != "" {
			imp = `,"importing":` + importing
		}
		return `{"type":"planned_change","change":{"resource":{"addr":"` + addr + `"},"action":"` + action + `"` + imp + `}}`
	}
	big := strings.Repeat("x", 200<<10)
	for _, tc := range []struct {
		name  string
		lines []string
		want  uiStream
	}{
		{name: "nothing"},
		{name: "diagnostics, errors only",
			lines: []string{
				`{"type":"diagnostic","diagnostic":{"severity":"warning","summary":"Deprecated"}}`,
				`{"type":"diagnostic","diagnostic":{"severity":"error","summary":" Boom \n","detail":"\nwhy\n"}}`,
				`{"type":"diagnostic"}`,
			},
			want: uiStream{errorText: []string{"Error: Boom\n\nwhy"}}},
		{name: "planned changes",
			lines: []string{change("a", "create", ""), change("b", "update", ""), change("c", "delete", ""), change("d", "replace", ""),
				change("e", "noop", ""), change("f", "noop", `{"id":"i-1"}`), change("g", "noop", "null"), change("h", "move", ""),
				change("i", "create", `{"id":"i-2"}`)},
			want: uiStream{changes: []Change{
				{Address: "a", Actions: []string{"create"}}, {Address: "b", Actions: []string{"update"}},
				{Address: "c", Actions: []string{"delete"}}, {Address: "d", Actions: []string{"delete", "create"}},
				{Address: "f", Actions: []string{"no-op"}, Importing: true}, {Address: "i", Actions: []string{"create"}, Importing: true},
			}}},
		{name: "a tainted object's replacement",
			lines: []string{`{"type":"planned_change","change":{"resource":{"addr":"t"},"action":"replace","reason":"tainted"}}`},
			want:  uiStream{changes: []Change{{Address: "t", Actions: []string{"delete", "create"}, Tainted: true}}}},
		{name: "summary", lines: []string{`{"type":"change_summary","changes":{"add":2,"change":1,"import":1,"remove":0,"operation":"apply"}}`},
			want: uiStream{summary: &changeSummary{Add: 2, Change: 1, Import: 1, Operation: "apply"}}},
		{name: "outputs with their values",
			lines: []string{`{"type":"outputs","outputs":{"a":{"value":"x"},"big":{"value":"` + big + `"}}}`},
			want:  uiStream{complete: true, outputs: map[string]Output{"a": {Value: json.RawMessage(`"x"`)}, "big": {Value: json.RawMessage(`"` + big + `"`)}}}},
		{name: "a sensitive output",
			lines: []string{`{"type":"outputs","outputs":{"a":{"value":1},"pw":{"sensitive":true}}}`},
			want:  uiStream{outputs: map[string]Output{"a": {Value: json.RawMessage(`1`)}, "pw": {Sensitive: true}}}},
		{name: "an output without its value",
			lines: []string{`{"type":"outputs","outputs":{"a":{}}}`},
			want:  uiStream{outputs: map[string]Output{"a": {}}}},
		{name: "the last outputs count",
			lines: []string{`{"type":"outputs","outputs":{"pw":{"sensitive":true}}}`, `{"type":"outputs","outputs":{}}`},
			want:  uiStream{complete: true, outputs: map[string]Output{}}},
		{name: "not JSON", lines: []string{"Terraform used the selected providers", "{", change("a", "create", "")},
			want: uiStream{changes: []Change{{Address: "a", Actions: []string{"create"}}}}},
	} {
		got := parseUIStream([]byte(strings.Join(tc.lines, "\n")))
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(uiStream{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestWithDiagnostics: a failed run's error carries the diagnostics before its own
// message; a run that did not fail stays without error.
func TestWithDiagnostics(t *testing.T) {
	exit := errors.New("exit status 1")
	diags := uiStream{errorText: []string{"Error: A\n\none", "Error: B\n\ntwo"}}
	if err := diags.withDiagnostics(nil); err != nil {
		t.Errorf("no error: %v", err)
	}
	if err := (uiStream{}).withDiagnostics(exit); err != exit {
		t.Errorf("no diagnostics: %v, want the error as it is", err)
	}
	err := diags.withDiagnostics(exit)
	if want := "Error: A\n\none\n\nError: B\n\ntwo\nexit status 1"; err.Error() != want || !errors.Is(err, exit) {
		t.Errorf("got %q, want %q wrapping the exit", err, want)
	}
}
