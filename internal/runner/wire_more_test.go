package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/holder"
	"terraplane.io/terraplane/internal/statelock"
)

// TestWireErrorsSurviveJSON: an error a run ends with reaches the controller, through the
// runner's JSON answer, as the kind of error the Connector tells apart (a stale plan, a
// lock held by a live run, a lock no Terraplane process took, an outcome the state may
// not record, a create its check refused), with its message; wrapped errors are found inside their wrapping.
func TestWireErrorsSurviveJSON(t *testing.T) {
	lock := statelock.LockInfo{ID: "l1", Who: "ana@laptop", Operation: "apply", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	for _, tc := range []struct {
		name  string
		err   error
		check func(error) bool
	}{
		{"a stale plan", fmt.Errorf("apply: %w", &engine.StalePlanError{}), func(err error) bool {
			var s *engine.StalePlanError
			return errors.As(err, &s)
		}},
		{"a held lock", fmt.Errorf("lock: %w", &statelock.HeldError{Lock: lock, Holder: holder.Holder{ID: "h2", PodName: "ctl-0", PodNamespace: "sys"}}), func(err error) bool {
			var h *statelock.HeldError
			return errors.As(err, &h) && h.Holder.PodName == "ctl-0" && h.Lock.Who == "ana@laptop" && h.Lock.Created.Equal(lock.Created)
		}},
		{"a foreign lock", &statelock.StaleLockError{Lock: lock}, func(err error) bool {
			var s *statelock.StaleLockError
			return errors.As(err, &s) && s.Lock.ID == "l1" && s.Lock.Operation == "apply"
		}},
		{"an unrecorded outcome", engine.Unrecorded(errors.New("terraform was killed")), func(err error) bool {
			return engine.OutcomeUnknown(err) && err.Error() == "terraform was killed"
		}},
		{"a create its check refused", fmt.Errorf("create: %w", &engine.CreateRefusedError{Reason: "its plan did not pass every rule"}), func(err error) bool {
			var r *engine.CreateRefusedError
			return errors.As(err, &r) && r.Reason == "its plan did not pass every rule"
		}},
		{"a plain failure", errors.New("Error: bucket exists"), func(err error) bool {
			return !engine.OutcomeUnknown(err) && err.Error() == "Error: bucket exists"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(frame{Reply: &reply{Error: toWireError(tc.err)}})
			if err != nil {
				t.Fatal(err)
			}
			var got frame
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if got.Reply == nil {
				t.Fatalf("%s: no reply", raw)
			}
			if back := got.Reply.Error.err(); back == nil || !tc.check(back) {
				t.Errorf("%s came back as %T %v", raw, back, back)
			}
		})
	}
}

// TestWireRunsSurviveJSON: a terraform command a runner reports arrives with its verb,
// workspace, object, timing and error.
func TestWireRunsSurviveJSON(t *testing.T) {
	run := engine.Run{Verb: "apply", Workspace: "uid-1", Kind: "S3Bucket", Name: "photos",
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Duration: 1500 * time.Millisecond, Err: errors.New("exit status 1")}
	raw, err := json.Marshal(frame{Run: toWireRun(run)})
	if err != nil {
		t.Fatal(err)
	}
	var got frame
	if err := json.Unmarshal(raw, &got); err != nil || got.Run == nil {
		t.Fatalf("%s: %v", raw, err)
	}
	back := got.Run.run()
	if back.Verb != run.Verb || back.Workspace != run.Workspace || back.Kind != run.Kind || back.Name != run.Name ||
		!back.Started.Equal(run.Started) || back.Duration != run.Duration || back.Err == nil || back.Err.Error() != "exit status 1" {
		t.Errorf("run came back as %+v", back)
	}
}
