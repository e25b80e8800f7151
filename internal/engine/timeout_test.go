package engine

import (
	"context"
	"testing"
	"time"
)

// deadlineLocker records the deadline of the context each lock is taken under.
type deadlineLocker struct{ deadlines []time.Duration }

func (d *deadlineLocker) LockState(ctx context.Context, _ map[string]string, _ string, _ bool) (func(bool, []byte), []byte, error) {
	dl, _ := ctx.Deadline()
	d.deadlines = append(d.deadlines, time.Until(dl).Round(time.Minute))
	return func(bool, []byte) {}, nil, nil
}

func (d *deadlineLocker) SeedState(context.Context, map[string]string) error { return nil }

func (d *deadlineLocker) HolderID() string { return "deadline-locker" }

// TestCommandDeadline: each command runs under its workspace's own timeout (a
// resource's spec.timeout), else the engine's; the state lock is taken under the same
// deadline, so that the lock can record when the command must have ended.
func TestCommandDeadline(t *testing.T) {
	for name, tc := range map[string]struct {
		own  time.Duration
		want time.Duration
	}{
		"the engine's":             {0, 20 * time.Minute},
		"a longer one of its own":  {3 * time.Hour, 3 * time.Hour},
		"a shorter one of its own": {5 * time.Minute, 5 * time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			locker := &deadlineLocker{}
			e := &Engine{opts: Options{Timeout: 20 * time.Minute, Locker: locker, WorkDir: t.TempDir()}}
			ws := Workspace{ID: "w", Timeout: tc.own, BackendConfig: map[string]string{"namespace": "ns", "secret_suffix": "abc"}}
			var got time.Duration
			err := e.run(context.Background(), ws, "apply", func(ctx context.Context) error {
				dl, ok := ctx.Deadline()
				if !ok {
					t.Fatal("the command has no deadline")
				}
				got = time.Until(dl).Round(time.Minute)
				return nil
			})
			if err != nil || got != tc.want || len(locker.deadlines) != 1 || locker.deadlines[0] != tc.want {
				t.Fatalf("err %v, command deadline in %s, lock deadlines %v; want %s for both", err, got, locker.deadlines, tc.want)
			}
		})
	}
}
