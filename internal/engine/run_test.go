package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// messageless is an error with no message, as terraform-exec returns for a process that
// exited cleanly just as its context ended: asking for its message panics.
type messageless struct{ err error }

func (e messageless) Error() string { return e.err.Error() }

func TestRunInterruptedNeverAsksTheRunsErrorForItsMessage(t *testing.T) {
	e := &Engine{opts: Options{Timeout: time.Minute}}
	ctx, cancel := context.WithCancel(context.Background())
	err := e.run(ctx, Workspace{}, "plan", func(context.Context) error {
		cancel()
		return messageless{}
	})
	if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "terraform plan was interrupted") {
		t.Fatalf("got %v, want an interrupted plan", err)
	}
}
