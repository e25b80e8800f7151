package engine

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// maxSummary bounds the one-line summary a condition shows, unless its cause alone is
// longer: the cause is kept whole up to maxCause, and what comes before it is cut.
const maxSummary = 300

// minHead is how much of what comes before a long cause a summary keeps: enough to say
// what failed.
const minHead = 40

// maxCause bounds the cause a summary keeps whole, far within the API server's limit on a
// condition's message (32768 bytes) and short enough for an event.
const maxCause = 2048

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
		summary = strings.TrimSpace(requestIDs.ReplaceAllString(summary, ""))
		cause := len(summary)
		if detail := firstLine(lines[i+1:]); detail != "" && !exitStatus.MatchString(detail) && !strings.Contains(summary, detail) {
			summary = strings.TrimSuffix(summary, ":") + ": "
			cause = len(summary)
			summary += requestIDs.ReplaceAllString(detail, "")
		}
		return clip(summary, causeAt(summary, cause))
	}
	line := firstLine(lines)
	return clip(line, causeAt(line, strings.LastIndex(line, ": ")+len(": ")))
}

// exitStatus is how a failed terraform process ends the error text, after its
// diagnostics: no detail of a diagnostic that has none.
var exitStatus = regexp.MustCompile(`^exit status \d+$`)

// apiError starts a cloud API's error code and message, the cause of a provider's error.
const apiError = "api error "

// causeAt is where the cause of summary s starts: a cloud API's error code where there is
// one, otherwise at, the start of the detail (or the last part of an error chain); 0
// when s has no cause of its own.
func causeAt(s string, at int) int {
	if i := strings.LastIndex(s, apiError); i >= 0 {
		return i
	}
	if at < 0 || at >= len(s) || at < len(": ") {
		return 0
	}
	return at
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

// clip fits s, whose cause starts at byte cause, into maxSummary: the cause is kept whole
// (up to maxCause) and what comes before it is cut in its middle, its start (the
// operation that failed) kept; with no cause (0), s is cut at its end.
func clip(s string, cause int) string {
	if len(s) <= maxSummary {
		return strings.TrimSpace(s)
	}
	head, tail := s[:cause], strings.TrimSpace(s[cause:])
	if len(tail) > maxCause || cause == 0 {
		limit := maxCause
		if cause == 0 {
			limit = maxSummary
		}
		if len(tail) > limit {
			tail = cutAt(tail, limit-len("...")) + "..."
		}
	}
	if head == "" {
		return tail
	}
	if room := max(maxSummary-len(tail)-len("... "), minHead); len(head) > room {
		head = cutAt(head, room) + "... "
	}
	return strings.TrimSpace(head + tail)
}

// cutAt is the longest prefix of s of at most n bytes that ends on a character boundary.
func cutAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
