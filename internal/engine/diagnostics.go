package engine

import (
	"regexp"
	"strings"
)

// maxSummary bounds the one-line summary a condition shows.
const maxSummary = 300

var (
	// boxPrefix is the frame terraform draws around diagnostics on a terminal-less stderr.
	boxPrefix = regexp.MustCompile(`^[│╷╵\s]+`)
	// ansi are colour escapes.
	ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")
)

// Summary turns terraform's error text (its -json diagnostics, or the framed banner it
// prints on stderr) into one line: the first error's summary and the first line of its
// detail. The full text belongs in a debug log, never in a condition.
func Summary(err error) string {
	if err == nil {
		return ""
	}
	return summarize(err.Error())
}

func summarize(text string) string {
	lines := strings.Split(ansi.ReplaceAllString(text, ""), "\n")
	for i, l := range lines {
		l = boxPrefix.ReplaceAllString(l, "")
		_, summary, ok := strings.Cut(l, "Error: ") // after the context an error is wrapped in
		if !ok {
			continue
		}
		if detail := firstLine(lines[i+1:]); detail != "" && !strings.Contains(summary, detail) {
			summary = strings.TrimSuffix(summary, ":") + ": " + detail
		}
		return clip(requestIDs.ReplaceAllString(summary, ""))
	}
	return clip(firstLine(lines))
}

// requestIDs are the request and host ids a cloud API puts before its error code: noise
// that would push the code out of a clipped summary.
var requestIDs = regexp.MustCompile(`(RequestID|HostID|request id|host id): [^,]*, `)

// Faults a user must fix, as UserFault names them.
const (
	// FaultAccessDenied: the credentials may not do what the module asks.
	FaultAccessDenied = "AccessDenied"
	// FaultAlreadyExists: what the module creates exists already (a name is taken).
	FaultAlreadyExists = "AlreadyExists"
	// FaultInvalidInput: terraform refused an input value (a wrong type, say).
	FaultInvalidInput = "InvalidInput"
	// FaultModuleIncomplete: a module the configuration calls is not among its files (a
	// local module left out of the source, say).
	FaultModuleIncomplete = "ModuleIncomplete"
)

// faults recognise, in terraform's error text, failures that running again cannot fix.
var faults = []struct {
	reason string
	re     *regexp.Regexp
}{
	{FaultAccessDenied, regexp.MustCompile(`api error (AccessDenied\w*|UnauthorizedOperation|AuthorizationError|InvalidClientTokenId|SignatureDoesNotMatch|UnrecognizedClientException|Forbidden)\b|StatusCode: 403\b`)},
	{FaultAlreadyExists, regexp.MustCompile(`api error (\w*AlreadyExists\w*|\w*AlreadyOwnedByYou)\b|(?i)\balready exists\b`)},
	{FaultInvalidInput, regexp.MustCompile(`Invalid value for (input )?variable|Incorrect attribute value type|Inappropriate value for attribute|Unsupported argument|Missing required argument|` +
		// an expression that fails on the value an input variable holds fails again on the same inputs
		`Error: variables? [\w-]+(, [\w-]+)*: `)},
	{FaultModuleIncomplete, regexp.MustCompile(`Unreadable module directory|Module not installed`)},
}

// UserFault reports whether a failed run failed for a reason a user must fix (one of
// the Fault reasons), rather than one that may pass on its own.
func UserFault(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	text := err.Error()
	for _, f := range faults {
		if f.re.MatchString(text) {
			return f.reason, true
		}
	}
	return "", false
}

// firstLine is the first non-empty line, frame removed.
func firstLine(lines []string) string {
	for _, l := range lines {
		if l = strings.TrimSpace(boxPrefix.ReplaceAllString(l, "")); l != "" {
			return l
		}
	}
	return ""
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxSummary {
		return s[:maxSummary-3] + "..."
	}
	return s
}
