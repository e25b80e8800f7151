package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRedact: secret values of four characters or more leave the message, longest first;
// the original error goes, so nothing wrapped in it can leak them later.
func TestRedact(t *testing.T) {
	inner := errors.New("login with abcdefg failed")
	for _, tc := range []struct {
		name    string
		err     error
		secrets map[string]string
		want    string
	}{
		{"longest first", inner, map[string]string{"a": "abcd", "b": "abcdef"}, "login with (redacted)g failed"},
		{"short values stay", errors.New("pin 123 ok"), map[string]string{"pin": "123"}, "pin 123 ok"},
		{"every occurrence", errors.New("tok tok-1 and tok-1"), map[string]string{"t": "tok-1"}, "tok (redacted) and (redacted)"},
		{"wrapped", fmt.Errorf("terraform plan: %w", inner), map[string]string{"p": "abcdefg"}, "terraform plan: login with (redacted) failed"},
		{"no secrets", inner, nil, "login with abcdefg failed"},
	} {
		got := Redact(tc.err, tc.secrets)
		var r *RedactedError
		if !errors.As(got, &r) || got.Error() != tc.want {
			t.Errorf("%s: %T %q, want a RedactedError %q", tc.name, got, got, tc.want)
		}
		if errors.Is(got, inner) || errors.Unwrap(got) != nil {
			t.Errorf("%s: the redacted error still wraps the original", tc.name)
		}
	}
	if Redact(nil, map[string]string{"a": "abcd"}) != nil {
		t.Error("no error must stay no error")
	}
	done := &RedactedError{msg: "already"}
	if got := Redact(done, nil); got != error(done) {
		t.Errorf("a redacted error without secrets to remove: %v, want it returned as it is", got)
	}
	if got := Redact(done, map[string]string{"a": "already"}); got.Error() != "(redacted)" {
		t.Errorf("a redacted error with more secrets: %q", got)
	}
}

// TestWorkspaceSecrets: the values redacted from a workspace's errors are its environment
// and its secret variables, texts as they are and other values as JSON; the environment
// map is not changed.
func TestWorkspaceSecrets(t *testing.T) {
	env := map[string]string{"AWS_SECRET_ACCESS_KEY": "key-value"}
	for _, tc := range []struct {
		name string
		ws   Workspace
		want map[string]string
	}{
		{"environment only", Workspace{Env: env}, env},
		{"nothing", Workspace{}, nil},
		{"secret variables without environment", Workspace{SecretVars: map[string]any{"pw": "hunter22", "cfg": map[string]any{"k": "v"}, "n": 1234.0}},
			map[string]string{"var.pw": "hunter22", "var.cfg": `{"k":"v"}`, "var.n": "1234"}},
		{"both", Workspace{Env: env, SecretVars: map[string]any{"pw": "hunter22"}},
			map[string]string{"AWS_SECRET_ACCESS_KEY": "key-value", "var.pw": "hunter22"}},
	} {
		if diff := cmp.Diff(tc.want, tc.ws.secrets()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if len(env) != 1 {
		t.Errorf("the environment was changed: %v", env)
	}
}

// TestOutcomeUnknown: only errors marked unrecorded, however wrapped, leave the outcome
// unknown; the mark keeps the error it marks.
func TestOutcomeUnknown(t *testing.T) {
	base := errors.New("apply failed")
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", base, false},
		{"marked", Unrecorded(base), true},
		{"marked, then wrapped", fmt.Errorf("terraform apply: %w", Unrecorded(base)), true},
	} {
		if got := OutcomeUnknown(tc.err); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if u := Unrecorded(base); !errors.Is(u, base) || u.Error() != base.Error() {
		t.Errorf("the mark changed the error: %v", u)
	}
}

// TestStopped: a command whose context ended says whether it ran out of time or was
// interrupted, and leaves its outcome unknown.
func TestStopped(t *testing.T) {
	e := &Engine{opts: Options{Timeout: 90 * time.Second}}
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	interrupted, stop := context.WithCancel(context.Background())
	stop()
	for _, tc := range []struct {
		ctx  context.Context
		want string
		is   error
	}{
		{expired, "terraform apply did not finish within 1m30s", context.DeadlineExceeded},
		{interrupted, "terraform apply was interrupted", context.Canceled},
	} {
		err := e.stopped(tc.ctx, Workspace{}, "apply")
		if !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, tc.is) || !OutcomeUnknown(err) {
			t.Errorf("%v, want %q, wrapping %v, outcome unknown", err, tc.want, tc.is)
		}
	}
}
