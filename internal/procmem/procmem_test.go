package procmem

import (
	"os"
	"testing"
)

// TestParseStatm: the resident set is statm's second field, in pages.
func TestParseStatm(t *testing.T) {
	for in, want := range map[string]uint64{"2000 300 50 1 0 400 0\n": 300 * 4096, "1 2": 2 * 4096, "": 0, "12": 0, "a b": 0} {
		got, ok := parseStatm([]byte(in), 4096)
		if got != want || ok != (want > 0) {
			t.Errorf("parseStatm(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
}

// TestRSS: a running process's resident memory is read from /proc; a process that does
// not exist has none.
func TestRSS(t *testing.T) {
	if rss, ok := RSS(os.Getpid()); !ok || rss < 1<<20 {
		t.Errorf("this process holds %d bytes (%v), want at least a MiB", rss, ok)
	}
	if rss, ok := RSS(1 << 30); ok || rss != 0 {
		t.Errorf("a process that does not exist holds %d bytes (%v)", rss, ok)
	}
}
