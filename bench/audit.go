package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// auditLog is the API server's log of the writes it answered (-audit), read for what each
// claim cost it: who wrote what, by verb and object.
type auditLog struct{ path string }

// offset is the log's size now: the writes logged after it are those of what follows.
func (a *auditLog) offset() int64 {
	if a == nil {
		return 0
	}
	fi, err := os.Stat(a.path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// write is one kind of write: who made it (the first word of its user agent), its verb,
// the object written (resource, and /subresource) and the answer's code.
type write struct {
	agent, verb, object string
	code                int
}

// auditEvent is the part of an audit event a write is counted by.
type auditEvent struct {
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// since counts the writes logged after offset, by kind.
func (a *auditLog) since(offset int64) (map[write]int, error) {
	if a == nil {
		return nil, nil
	}
	f, err := os.Open(a.path)
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	return countWrites(f)
}

// countWrites counts the audit events of r, one JSON object per line, by kind.
func countWrites(r io.Reader) (map[write]int, error) {
	counts := map[write]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue // a line cut short where the log was read
		}
		object := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			object += "/" + ev.ObjectRef.Subresource
		}
		agent, _, _ := strings.Cut(ev.UserAgent, "/")
		counts[write{agent: agent, verb: ev.Verb, object: object, code: ev.ResponseStatus.Code}]++
	}
	return counts, sc.Err()
}

// writesTable renders counts per claim of n, the most frequent first.
func writesTable(counts map[write]int, n int) string {
	kinds := make([]write, 0, len(counts))
	total := 0
	for k, c := range counts {
		kinds = append(kinds, k)
		total += c
	}
	sort.Slice(kinds, func(i, j int) bool {
		if counts[kinds[i]] != counts[kinds[j]] {
			return counts[kinds[i]] > counts[kinds[j]]
		}
		return fmt.Sprint(kinds[i]) < fmt.Sprint(kinds[j])
	})
	var b strings.Builder
	b.WriteString("| writer | verb | object | code | per claim |\n|---|---|---|---|---|\n")
	for _, k := range kinds {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %.2f |\n", k.agent, k.verb, k.object, k.code, float64(counts[k])/float64(n))
	}
	fmt.Fprintf(&b, "| all | | | | %.2f |\n", float64(total)/float64(n))
	return b.String()
}

// writeAudit writes bench/results/writes.md: each Terraplane row's API writes per claim
// from its claims' creation until all were Ready, by writer, verb and object.
func writeAudit(o options, rows []row) error {
	var b strings.Builder
	b.WriteString("# API writes per claim, from the API server's audit log\n\nFrom the first claim's creation until all are Ready, every writer (the bench's own claim creations included).\n")
	for _, r := range rows {
		if r.tp.audit == nil {
			continue
		}
		fmt.Fprintf(&b, "\n## %s, N=%d, %s controller\n\n%s", r.variant, r.n, r.start, writesTable(r.tp.audit, r.n))
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(o.out, "writes.md")
	fmt.Print(b.String())
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return err
	}
	fmt.Printf("written: %s\n", path)
	return nil
}
