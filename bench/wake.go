package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// wakeIdleTTL is the runner side's idle TTL: short, so that a runner stops soon after
// the claims are gone and the first run after it can be measured.
const wakeIdleTTL = 20 * time.Second

// wakeResult is the first claim after the pool's runner stopped for being idle (as a
// runner Deployment scales to zero), against one claim on the runner that it started.
type wakeResult struct {
	stopped time.Duration // from the last claim gone to the runner stopped
	cold    time.Duration // the claim that started the runner: created to Ready
	warm    time.Duration // the next claim, on the running runner: created to Ready
}

// ratio is the cold claim's time over the warm one's.
func (w wakeResult) ratio() float64 {
	if w.warm <= 0 {
		return 0
	}
	return w.cold.Seconds() / w.warm.Seconds()
}

// measureWake waits until the fleet's runners stopped (their idle TTL passed), then
// times one claim, which starts the pool's runner again, and one more on the running
// runner.
func (h *harness) measureWake(ctx context.Context, variant string) (wakeResult, error) {
	var res wakeResult
	start := time.Now()
	for len(h.fleet.runners(processes())) > 0 {
		if time.Since(start) > wakeIdleTTL+2*time.Minute {
			return res, fmt.Errorf("the runners did not stop within %s of their idle TTL", 2*time.Minute)
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	res.stopped = time.Since(start)
	say("%s: runners stopped after %s idle; one claim starts the pool's runner again", variant, res.stopped.Round(time.Second))
	cold, err := h.runClaims(ctx, variant, 1, "wake", 0, false)
	if err != nil {
		return res, err
	}
	warm, err := h.runClaims(ctx, variant, 1, "awake", 0, false)
	if err != nil {
		return res, err
	}
	res.cold, res.warm = cold.ready.last, warm.ready.last
	return res, nil
}

// wakeTable renders, for each (variant, N) whose runner side measured it, the first claim
// after the pool's runner stopped idle against one on the running runner.
func wakeTable(b *strings.Builder, rows []row) {
	if !slices.ContainsFunc(rows, func(r row) bool { return r.rn.wake.cold > 0 }) {
		return
	}
	fmt.Fprintf(b, "\nA runner stopped for being idle (`--runner-idle-ttl %s`, as a runner Deployment scales to zero) starts again on its pool's next run: one claim made then, against one made next on the running runner.\n\n", wakeIdleTTL)
	b.WriteString("| module | after N | runner stopped after (s) | claim Ready (s): starting the runner / runner running | ratio |\n")
	b.WriteString("|---|---:|---:|---:|---:|\n")
	for _, r := range rows {
		if w := r.rn.wake; w.cold > 0 {
			fmt.Fprintf(b, "| %s | %d | %.0f | %.1f / %.1f | %.2f× |\n", r.variant, r.n, w.stopped.Seconds(), w.cold.Seconds(), w.warm.Seconds(), w.ratio())
		}
	}
}
