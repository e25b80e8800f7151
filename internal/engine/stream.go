package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
)

// uiMessage is the part of terraform's machine-readable UI (-json) the engine reads.
type uiMessage struct {
	Type       string      `json:"type"`
	Diagnostic *diagnostic `json:"diagnostic"`
	Outputs    map[string]struct {
		Sensitive bool            `json:"sensitive"`
		Value     json.RawMessage `json:"value"`
	} `json:"outputs"`
	// Change is a planned_change's.
	Change *struct {
		Resource struct {
			Addr         string `json:"addr"`
			ResourceType string `json:"resource_type"`
		} `json:"resource"`
		Action    string          `json:"action"`
		Reason    string          `json:"reason"`
		Importing json.RawMessage `json:"importing"`
	} `json:"change"`
	// Changes is a change_summary's.
	Changes *changeSummary `json:"changes"`
}

// diagnostic is one of terraform's -json diagnostics.
type diagnostic struct {
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Detail   string `json:"detail"`
	// Address is the resource the diagnostic is about, e.g. module.this.aws_sqs_queue.this[0].
	Address string `json:"address"`
	Snippet *struct {
		// Code is the source line of the failing expression.
		Code string `json:"code"`
		// Values are the values of what the failing expression refers to, e.g.
		// {traversal: var.rule.days, statement: is "thirty"}.
		Values []struct {
			Traversal string `json:"traversal"`
			Statement string `json:"statement"`
		} `json:"values"`
	} `json:"snippet"`
}

// text is the diagnostic as terraform's banner words it: "Error: summary", a blank line,
// the detail. An error about a value an input variable holds is prefixed with the
// variable, and the values it names follow the detail's first line, so that a one-line
// summary says which input is wrong. A failed precondition, postcondition or check keeps
// its author's error_message as it is.
func (d *diagnostic) text() string {
	summary, detail := strings.TrimSpace(d.Summary), strings.TrimSpace(d.Detail)
	var vars, statements []string
	if d.Snippet != nil && !authoredCondition(summary) {
		iterated := forSymbols(d.Snippet.Code)
		for _, v := range d.Snippet.Values {
			root, _, _ := strings.Cut(strings.SplitN(v.Traversal, "[", 2)[0], ".")
			name, ok := iterated[root]
			if !ok {
				name, ok = strings.CutPrefix(v.Traversal, "var.")
				name, _, _ = strings.Cut(strings.SplitN(name, "[", 2)[0], ".")
			}
			if !ok {
				continue
			}
			if !slices.Contains(vars, name) {
				vars = append(vars, name)
			}
			statements = append(statements, v.Traversal+" "+v.Statement)
		}
	}
	if len(vars) == 0 && d.Snippet != nil && !authoredCondition(summary) {
		vars, statements = d.attributeVariables()
	}
	if len(vars) == 0 {
		return "Error: " + summary + "\n\n" + detail
	}
	first, rest, _ := strings.Cut(detail, "\n")
	if first == "" { // the values follow the summary
		summary, first = strings.TrimSuffix(summary, ".")+" ("+strings.Join(statements, ", ")+")", ""
	} else {
		first = strings.TrimSuffix(first, ".") + " (" + strings.Join(statements, ", ") + ")"
	}
	what := "variable "
	if len(vars) > 1 {
		what = "variables "
	}
	return "Error: " + what + strings.Join(vars, ", ") + ": " + summary + "\n\n" + strings.TrimSpace(first+"\n"+rest)
}

// attribute matches the start of a resource attribute's assignment: name = expression.
var attribute = regexp.MustCompile(`^\s*([A-Za-z_][\w-]*)\s*=\s*(.*)$`)

// varRef matches a reference to an input variable in an expression.
var varRef = regexp.MustCompile(`\bvar\.([A-Za-z_][\w-]*)`)

// attributeVariables names the input variables of an error a provider raised about a
// resource attribute (a value out of range, say), whose snippet is the attribute's
// assignment and carries no values: the variables its expression reads, and a statement
// naming the attribute and the resource. An attribute set from no variable names none.
func (d *diagnostic) attributeVariables() (vars, statements []string) {
	m := attribute.FindStringSubmatch(d.Snippet.Code)
	if m == nil {
		return nil, nil
	}
	for _, ref := range varRef.FindAllStringSubmatch(m[2], -1) {
		if !slices.Contains(vars, ref[1]) {
			vars = append(vars, ref[1])
		}
	}
	if len(vars) == 0 {
		return nil, nil
	}
	what := "attribute " + m[1]
	if d.Address != "" {
		what += " of " + d.Address
	}
	return vars, []string{what}
}

// forClause matches a for expression over an input variable: for k, v in var.x.
var forClause = regexp.MustCompile(`\bfor\s+([A-Za-z_][\w-]*)(?:\s*,\s*([A-Za-z_][\w-]*))?\s+in\s+var\.([A-Za-z_][\w-]*)`)

// forSymbols maps the symbols of the for expressions in code that iterate over an input
// variable to that variable: in [for rule in var.rules : rule.days + 0], a value of
// rule.days is one of var.rules.
func forSymbols(code string) map[string]string {
	out := map[string]string{}
	for _, m := range forClause.FindAllStringSubmatch(code, -1) {
		out[m[1]] = m[3]
		if m[2] != "" {
			out[m[2]] = m[3]
		}
	}
	return out
}

// authoredCondition reports whether a diagnostic's summary is that of a condition a
// module's author wrote (a precondition, a postcondition, a check), whose detail is the
// author's error_message.
func authoredCondition(summary string) bool {
	return strings.HasSuffix(summary, "precondition failed") || strings.HasSuffix(summary, "postcondition failed") ||
		strings.HasSuffix(summary, "assertion failed")
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
			s.errorText = append(s.errorText, m.Diagnostic.text())
		case m.Type == "planned_change" && m.Change != nil:
			acts, ok := streamActions[m.Change.Action]
			importing := len(m.Change.Importing) > 0 && string(m.Change.Importing) != "null"
			if ok && (acts[0] != "no-op" || importing) {
				s.changes = append(s.changes, Change{Address: m.Change.Resource.Addr, Actions: acts, Importing: importing,
					Tainted: m.Change.Reason == "tainted"})
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
