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
}

// applyStream is what an `apply -json` run reported.
type applyStream struct {
	outputs   map[string]Output
	complete  bool // every output came with its value (none sensitive)
	errorText []string
}

// parseApplyStream reads the outputs and error diagnostics from apply's JSON lines.
func parseApplyStream(raw []byte) applyStream {
	s := applyStream{}
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
func (s applyStream) withDiagnostics(err error) error {
	if err == nil || len(s.errorText) == 0 {
		return err
	}
	return errors.Join(errors.New(strings.Join(s.errorText, "\n\n")), err)
}
