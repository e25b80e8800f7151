package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// uiMessage is the part of terraform's machine-readable UI (-json) the engine reads.
type uiMessage struct {
	Type       string `json:"type"`
	Diagnostic *struct {
		Severity string `json:"severity"`
		Summary  string `json:"summary"`
		Detail   string `json:"detail"`
	} `json:"diagnostic"`
	Outputs map[string]struct {
		Sensitive bool            `json:"sensitive"`
		Value     json.RawMessage `json:"value"`
	} `json:"outputs"`
	// Change is a planned_change's.
	Change *struct {
		Resource struct {
			Addr string `json:"addr"`
		} `json:"resource"`
		Action    string          `json:"action"`
		Importing json.RawMessage `json:"importing"`
	} `json:"change"`
	// Changes is a change_summary's.
	Changes *changeSummary `json:"changes"`
}

// changeSummary is what terraform counted of an apply.
type changeSummary struct {
	Add       int    `json:"add"`
	Change    int    `json:"change"`
	Import    int    `json:"import"`
	Remove    int    `json:"remove"`
	Operation string `json:"operation"`
}

// streamActions are the plan actions of a planned_change's action keyword.
var streamActions = map[string][]string{
	"create": {"create"}, "update": {"update"}, "delete": {"delete"}, "replace": {"delete", "create"},
	"noop": {"no-op"},
}

// uiStream is what a run with -json (apply, plan, destroy) reported.
type uiStream struct {
	outputs   map[string]Output
	complete  bool // every output came with its value (none sensitive)
	changes   []Change
	summary   *changeSummary
	errorText []string
}

// parseUIStream reads the changes, outputs and error diagnostics from a -json run's lines.
func parseUIStream(raw []byte) uiStream {
	s := uiStream{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var m uiMessage
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch {
		case m.Type == "diagnostic" && m.Diagnostic != nil && m.Diagnostic.Severity == "error":
			s.errorText = append(s.errorText, "Error: "+strings.TrimSpace(m.Diagnostic.Summary)+"\n\n"+strings.TrimSpace(m.Diagnostic.Detail))
		case m.Type == "planned_change" && m.Change != nil:
			acts, ok := streamActions[m.Change.Action]
			importing := len(m.Change.Importing) > 0 && string(m.Change.Importing) != "null"
			if ok && (acts[0] != "no-op" || importing) {
				s.changes = append(s.changes, Change{Address: m.Change.Resource.Addr, Actions: acts, Importing: importing})
			}
		case m.Type == "change_summary" && m.Changes != nil:
			s.summary = m.Changes
		case m.Type == "outputs":
			s.outputs, s.complete = map[string]Output{}, true
			for name, o := range m.Outputs {
				if o.Sensitive || o.Value == nil {
					s.complete = false
				}
				s.outputs[name] = Output{Value: o.Value, Sensitive: o.Sensitive}
			}
		}
	}
	return s
}

// withDiagnostics puts terraform's error diagnostics (which -json sends to stdout) into err.
func (s uiStream) withDiagnostics(err error) error {
	if err == nil || len(s.errorText) == 0 {
		return err
	}
	return errors.Join(errors.New(strings.Join(s.errorText, "\n\n")), err)
}
