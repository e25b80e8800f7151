package modsource

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"terraplane.io/terraplane/internal/module"
)

// TestLoadReadsOncePerKey: a module is read once per key, also by callers asking at the
// same time; a failed read is not kept, so the next caller reads again.
func TestLoadReadsOncePerKey(t *testing.T) {
	l := &Loader{}
	reads := map[string]int{}
	var mu sync.Mutex
	release := make(chan struct{})
	read := func(key string, fail bool) func() (*Loaded, error) {
		return func() (*Loaded, error) {
			mu.Lock()
			reads[key]++
			mu.Unlock()
			<-release
			if fail {
				return nil, errors.New("unreachable")
			}
			return &Loaded{Module: &module.Module{}, Revision: key}, nil
		}
	}
	var wg sync.WaitGroup
	got := make([]*Loaded, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = l.load("a", read("a", false))
		}()
	}
	close(release)
	wg.Wait()
	for i, ld := range got {
		if ld == nil || ld != got[0] {
			t.Fatalf("caller %d got %p, want the one module %p", i, ld, got[0])
		}
	}
	if again, _ := l.load("a", read("a", false)); again != got[0] {
		t.Error("a later caller read the module again")
	}
	for range 2 {
		if _, err := l.load("b", read("b", true)); err == nil {
			t.Error("a failed read returned no error")
		}
	}
	if diff := cmp.Diff(map[string]int{"a": 1, "b": 2}, reads); diff != "" {
		t.Errorf("reads per key (-want +got):\n%s", diff)
	}
}

// TestLoadDropsUnusedModules: storing a module drops those nobody asked for within
// unusedAfter; asking for one keeps it.
func TestLoadDropsUnusedModules(t *testing.T) {
	l := &Loader{}
	mk := func(rev string) func() (*Loaded, error) {
		return func() (*Loaded, error) { return &Loaded{Revision: rev}, nil }
	}
	for _, k := range []string{"stale", "used", "recent"} {
		if _, err := l.load(k, mk(k)); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-2 * unusedAfter)
	l.cache["stale"].used, l.cache["used"].used = long, long
	if _, err := l.load("used", mk("other")); err != nil { // a hit: used again now
		t.Fatal(err)
	}
	if _, err := l.load("new", mk("new")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"new", "recent", "used"}, slices.Sorted(maps.Keys(l.cache))); diff != "" {
		t.Errorf("cached (-want +got):\n%s", diff)
	}
	if l.cache["used"].loaded.Revision != "used" {
		t.Errorf("a hit read the module again: %q", l.cache["used"].loaded.Revision)
	}
}

// TestMovingMarksACopy: the mark goes on a copy, so that a pinned and a moving source
// sharing one cached module each read their own; errors pass through.
func TestMovingMarksACopy(t *testing.T) {
	l := &Loader{}
	shared := &Loaded{Module: &module.Module{}, Revision: "abc"}
	moving, _ := l.moving(true)(shared, nil)
	pinned, _ := l.moving(false)(shared, nil)
	if !moving.Moving || pinned.Moving || shared.Moving {
		t.Errorf("moving %v, pinned %v, cached %v; want true, false, false", moving.Moving, pinned.Moving, shared.Moving)
	}
	if moving.Module != shared.Module || moving.Revision != "abc" {
		t.Errorf("the copy lost the module or its revision: %+v", moving)
	}
	boom := errors.New("boom")
	if ld, err := l.moving(true)(nil, boom); ld != nil || err != boom {
		t.Errorf("an error: %v, %v", ld, err)
	}
}

// TestResolveWithinTheRefreshInterval: a ref is looked up once per refresh interval and
// key; a failed lookup is not kept.
func TestResolveWithinTheRefreshInterval(t *testing.T) {
	l := &Loader{RefreshInterval: time.Hour}
	lookups := 0
	answer, fail := "c1", false
	lookup := func() (string, error) {
		lookups++
		if fail {
			return "", errors.New("unreachable")
		}
		return answer, nil
	}
	steps := []struct {
		name    string
		key     string
		before  func()
		want    string
		err     bool
		lookups int
	}{
		{name: "first", key: "main", want: "c1", lookups: 1},
		{name: "within the interval", key: "main", before: func() { answer = "c2" }, want: "c1", lookups: 1},
		{name: "another key", key: "dev", want: "c2", lookups: 2},
		{name: "past the interval", key: "main", before: func() { l.refs["main"] = resolved{"c1", time.Now().Add(-2 * time.Hour)} }, want: "c2", lookups: 3},
		{name: "failed lookup", key: "tag", before: func() { fail = true }, err: true, lookups: 4},
		{name: "failure not kept", key: "tag", before: func() { fail = false }, want: "c2", lookups: 5},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		got, err := l.resolve(s.key, lookup)
		if got != s.want || (err != nil) != s.err || lookups != s.lookups {
			t.Errorf("%s: %q, %v after %d lookups; want %q, error %v, %d lookups", s.name, got, err, lookups, s.want, s.err, s.lookups)
		}
	}
}

// TestDefaults: unset settings fall back to their defaults.
func TestDefaults(t *testing.T) {
	for _, tc := range []struct {
		l       *Loader
		refresh time.Duration
		fetch   int64
	}{
		{&Loader{}, DefaultRefreshInterval, DefaultMaxFetchBytes},
		{&Loader{RefreshInterval: -time.Second, MaxFetchBytes: -1}, DefaultRefreshInterval, DefaultMaxFetchBytes},
		{&Loader{RefreshInterval: time.Minute, MaxFetchBytes: 1 << 20}, time.Minute, 1 << 20},
	} {
		if got := tc.l.RefreshPeriod(); got != tc.refresh {
			t.Errorf("%+v: RefreshPeriod %v, want %v", tc.l, got, tc.refresh)
		}
		if got := tc.l.maxFetch(); got != tc.fetch {
			t.Errorf("%+v: maxFetch %d, want %d", tc.l, got, tc.fetch)
		}
	}
	for n, want := range map[int64]string{DefaultMaxFetchBytes: "100Mi", 1 << 30: "1Gi", 1 << 10: "1Ki"} {
		if got := size(n); got != want {
			t.Errorf("size(%d) = %q, want %q", n, got, want)
		}
	}
}

// nopCloser is a buffer that closes.
type nopCloser struct{ bytes.Buffer }

func (nopCloser) Close() error { return nil }

// TestCappedWriter: writes pass until the store's total passes its limit; from then on
// every write fails with errFetchTooLarge and the store reports it is over.
func TestCappedWriter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limit  int64
		writes []int
		failAt int // index of the first refused write; -1 for none
	}{
		{"under", 10, []int{3, 3, 3}, -1},
		{"exactly at the limit", 10, []int{5, 5}, -1},
		{"one byte over", 10, []int{5, 6, 1}, 1},
		{"first write too large", 4, []int{5}, 0},
	} {
		s := &cappedStorage{limit: tc.limit}
		var buf nopCloser
		w := &cappedWriter{WriteCloser: &buf, s: s}
		failed, kept := -1, 0
		for i, n := range tc.writes {
			_, err := w.Write(bytes.Repeat([]byte("x"), n))
			if err != nil && failed < 0 {
				failed = i
				if !errors.Is(err, errFetchTooLarge) {
					t.Errorf("%s: %v, want errFetchTooLarge", tc.name, err)
				}
			}
			if err == nil {
				kept += n
			}
		}
		if failed != tc.failAt || s.over() != (tc.failAt >= 0) || buf.Len() != kept {
			t.Errorf("%s: first refused %d, over %v, %d bytes written; want %d, %v", tc.name, failed, s.over(), buf.Len(), tc.failAt, tc.failAt >= 0)
		}
	}
}
