package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/gomega"
)

// outputsDoc is what a kind's docs page promises: its connection Secret's keys (those
// the page says come only with an option left out) and its status.atProvider fields.
type outputsDoc struct {
	connection []string
	atProvider []string
}

var (
	backticked  = regexp.MustCompile("`([A-Za-z][A-Za-z0-9]*)`")
	conditional = regexp.MustCompile("with\\s+`([A-Za-z][A-Za-z0-9]*)`")
)

// documentedOutputs reads the section of docs/kinds/<cloud>.md whose heading names kind.
func documentedOutputs(g Gomega, cloud, kind string) outputsDoc {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "kinds", cloud+".md"))
	g.Expect(err).NotTo(HaveOccurred())
	section := docSection(string(page), kind)
	g.Expect(section).NotTo(BeEmpty(), "docs/kinds/%s.md has no section on %s", cloud, kind)
	doc := outputsDoc{
		connection: namesIn(paragraph(section, "Connection Secret:")),
		atProvider: namesIn(paragraph(section, "`status.atProvider`:")),
	}
	g.Expect(doc.connection).NotTo(BeEmpty(), "the %s section lists no connection keys", kind)
	g.Expect(doc.atProvider).NotTo(BeEmpty(), "the %s section lists no status.atProvider fields", kind)
	return doc
}

// docSection is the text under the "## " heading that names kind, up to the next one.
func docSection(page, kind string) string {
	for _, s := range strings.Split(page, "\n## ")[1:] {
		heading, _, _ := strings.Cut(s, "\n")
		if regexp.MustCompile(`\b` + kind + `\b`).MatchString(heading) {
			return s
		}
	}
	return ""
}

// paragraph is the paragraph of section that starts with prefix.
func paragraph(section, prefix string) string {
	for _, p := range strings.Split(section, "\n\n") {
		if strings.HasPrefix(p, prefix) {
			return strings.TrimPrefix(p, prefix)
		}
	}
	return ""
}

// namesIn are the backticked names in text but those it names as a condition ("with `x`").
func namesIn(text string) []string {
	skip := map[string]bool{}
	for _, m := range conditional.FindAllStringSubmatch(text, -1) {
		skip[m[1]] = true
	}
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(text, -1) {
		if !skip[m[1]] {
			out = append(out, m[1])
		}
	}
	return out
}

// deletedSince are the resource types the stand-ins deleted (ApplyResourceChange) since
// start whose deleted state holds one of tokens.
func deletedSince(g Gomega, calls string, start time.Time, tokens ...string) []string {
	f, err := os.Open(calls)
	g.Expect(err).NotTo(HaveOccurred(), "the stand-ins logged nothing")
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var call struct {
			Time               time.Time
			Call, Type, Action string
			Values             json.RawMessage
		}
		if json.Unmarshal(sc.Bytes(), &call) != nil || call.Call != "ApplyResourceChange" || call.Action != "delete" || call.Time.Before(start) {
			continue // a line still being written, or another call
		}
		g.Expect(call.Values).NotTo(BeEmpty(), "the stand-in logs deletes without the state deleted: it predates this test; run make tools-test (hack/install-tools.sh cloud-schemas)")
		for _, tok := range tokens {
			if strings.Contains(string(call.Values), tok) {
				out = append(out, call.Type)
				break
			}
		}
	}
	g.Expect(sc.Err()).NotTo(HaveOccurred())
	return out
}
