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
		return clip(summary)
	}
	return clip(firstLine(lines))
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
