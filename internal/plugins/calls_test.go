package plugins

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInFlight: a stop request ends the calls in flight on its own connection only.
func TestInFlight(t *testing.T) {
	on := func(conn int64) context.Context { return context.WithValue(context.Background(), connKey{}, conn) }
	cases := []struct {
		name   string
		calls  []int64 // the connection of each call
		ended  []bool  // calls already ended before the stop request
		stopOn int64
		want   []bool // which calls' contexts are cancelled
	}{
		{"only the asking run's calls", []int64{1, 1, 2}, nil, 1, []bool{true, true, false}},
		{"a run with no call in flight ends nothing", []int64{1, 2}, nil, 3, []bool{false, false}},
		{"calls of an unknown connection are one run", []int64{0, 0, 1}, nil, 0, []bool{true, true, false}},
		{"an ended call is not counted", []int64{1, 1}, []bool{true, false}, 2, []bool{true, false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f inFlight
			ctxs := make([]context.Context, len(tc.calls))
			for i, conn := range tc.calls {
				ctx, done := f.start(on(conn))
				ctxs[i] = ctx
				if i < len(tc.ended) && tc.ended[i] {
					done()
				} else {
					defer done()
				}
			}
			f.cancel(on(tc.stopOn))
			got := make([]bool, len(ctxs))
			for i, ctx := range ctxs {
				got[i] = ctx.Err() != nil
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("calls cancelled (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInFlightForgetsEndedCalls: a connection whose calls have all ended is forgotten.
func TestInFlightForgetsEndedCalls(t *testing.T) {
	var f inFlight
	ctx := context.WithValue(context.Background(), connKey{}, int64(7))
	_, first := f.start(ctx)
	_, second := f.start(ctx)
	first()
	if n := len(f.byConn[7]); n != 1 {
		t.Fatalf("%d calls in flight on the connection, want 1", n)
	}
	second()
	if len(f.byConn) != 0 {
		t.Errorf("connections remembered after their calls ended: %v", f.byConn)
	}
}

// TestConnTagger: each connection gets a number of its own, and calls carry it.
func TestConnTagger(t *testing.T) {
	var tagger connTagger
	a := tagger.TagConn(context.Background(), nil)
	b := tagger.TagConn(context.Background(), nil)
	if diff := cmp.Diff([]int64{1, 2, 0}, []int64{connOf(a), connOf(b), connOf(context.Background())}); diff != "" {
		t.Errorf("connection numbers (-want +got):\n%s", diff)
	}
	if got := connOf(tagger.TagRPC(a, nil)); got != 1 {
		t.Errorf("a call on connection 1 carries %d", got)
	}
}
