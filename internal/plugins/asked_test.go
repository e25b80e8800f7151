package plugins

import (
	"context"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestAnswersAskedOnce: runs that ask a question while it is being asked wait for that
// answer instead of asking the provider too; only an answer fit to cache is cached.
func TestAnswersAskedOnce(t *testing.T) {
	valid, invalid := string(field1("valid")), string(withDiagnostics(field1("x"), 2))
	cases := []struct {
		name    string
		answers []string // the provider's answers, in order; "fail" is an error
		waiters int      // runs asking while the first one asks
		cancel  bool     // the waiters' runs end before the answer comes
		want    []string // the asker's answer, then the waiters'
		later   string   // a question asked once all is answered
		asked   int      // times the provider was asked, the later question included
	}{{
		name:    "asked once for all the runs, then answered from the cache",
		answers: []string{valid},
		waiters: 4,
		want:    []string{valid, valid, valid, valid, valid},
		later:   valid,
		asked:   1,
	}, {
		name:    "an answer with diagnostics reaches the waiters, and is asked again later",
		answers: []string{invalid, invalid},
		waiters: 3,
		want:    []string{invalid, invalid, invalid, invalid},
		later:   invalid,
		asked:   2,
	}, {
		name:    "when the asker fails, one waiter asks again for the others",
		answers: []string{"fail", valid},
		waiters: 3,
		want:    []string{"error", valid, valid, valid},
		later:   valid,
		asked:   2,
	}, {
		name:    "a waiter whose run ends stops waiting",
		answers: []string{valid},
		waiters: 2,
		cancel:  true,
		want:    []string{valid, "error", "error"},
		later:   valid,
		asked:   1,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cache := &answers{}
			calls := &pureCalls{binary: "aws", cache: cache}
			const method = "/tfplugin6.Provider/ValidateProviderConfig"
			k := cache.key("aws", method, []byte("cfg"))
			var asked atomic.Int32
			release := make(chan struct{})
			ask := func() ([]byte, error) {
				n := asked.Add(1)
				if n == 1 {
					<-release
				}
				if a := tc.answers[n-1]; a != "fail" {
					return []byte(a), nil
				}
				return nil, errors.New("the run ended")
			}
			result := func(b []byte, err error) string {
				if err != nil {
					return "error"
				}
				return string(b)
			}
			var first string
			firstDone := make(chan struct{})
			go func() {
				first = result(calls.answer(context.Background(), method, []byte("cfg"), ask))
				close(firstDone)
			}()
			waitFor(t, func() bool { return asked.Load() == 1 })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			var got []string
			var wg sync.WaitGroup
			for range tc.waiters {
				wg.Go(func() {
					r := result(calls.answer(ctx, method, []byte("cfg"), ask))
					mu.Lock()
					got = append(got, r)
					mu.Unlock()
				})
			}
			waitFor(t, func() bool {
				cache.mu.Lock()
				defer cache.mu.Unlock()
				return cache.asking[k] != nil && cache.asking[k].waiters == tc.waiters
			})
			if tc.cancel {
				cancel()
				wg.Wait()
			}
			close(release)
			wg.Wait()
			<-firstDone
			sort.Strings(got)
			if diff := cmp.Diff(tc.want, append([]string{first}, got...)); diff != "" {
				t.Errorf("answers, the asker's first (-want +got):\n%s", diff)
			}
			if later := result(calls.answer(context.Background(), method, []byte("cfg"), ask)); later != tc.later {
				t.Errorf("the later question got %q, want %q", later, tc.later)
			}
			if int(asked.Load()) != tc.asked {
				t.Errorf("the provider was asked %d times, want %d", asked.Load(), tc.asked)
			}
		})
	}
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within ten seconds")
		}
	}
}
