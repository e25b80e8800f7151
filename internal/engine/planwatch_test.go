package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"terraplane.io/terraplane/internal/plugins"
)

// uiLine is a planned_change line of terraform's machine-readable UI.
func uiLine(addr, typ, action string) string {
	return fmt.Sprintf(`{"type":"planned_change","change":{"resource":{"addr":%q,"resource_type":%q},"action":%q}}`+"\n", addr, typ, action)
}

const planSummary = `{"type":"change_summary","changes":{"add":2,"operation":"plan"}}` + "\n"

// TestPlanWatchCreates: once the plan is summarised, each planned create gets its
// address and the provider's first plan of its type (a later one repeats it while
// applying); a plan of anything but creates, or of two instances of one type, cannot
// be checked; the watch waits for the summary, written in pieces.
func TestPlanWatchCreates(t *testing.T) {
	planned := []plugins.PlannedCreate{{Type: "aws_s3_bucket", After: "first"}, {Type: "aws_s3_bucket_versioning"}, {Type: "aws_s3_bucket", After: "again"}}
	for name, tc := range map[string]struct {
		ui      string
		want    []string // address=after
		problem string
	}{
		"creates": {uiLine("module.this.aws_s3_bucket.this", "aws_s3_bucket", "create") + uiLine("module.this.aws_s3_bucket_versioning.this", "aws_s3_bucket_versioning", "create") + planSummary,
			[]string{"module.this.aws_s3_bucket.this=first", "module.this.aws_s3_bucket_versioning.this=<nil>"}, ""},
		"a read":           {uiLine("data.aws_caller_identity.c", "aws_caller_identity", "read") + planSummary, nil, "more than create"},
		"two of one type":  {uiLine("aws_s3_bucket.a[0]", "aws_s3_bucket", "create") + uiLine("aws_s3_bucket.a[1]", "aws_s3_bucket", "create") + planSummary, nil, "more than one aws_s3_bucket"},
		"no provider plan": {uiLine("random_id.r", "random_id", "create") + planSummary, nil, "no provider planned random_id.r"},
	} {
		t.Run(name, func(t *testing.T) {
			w := newPlanWatch()
			for chunk := range slicesOf(tc.ui, 17) {
				if _, err := w.Write([]byte(chunk)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := w.creates(context.Background(), planned)
			if tc.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tc.problem) {
					t.Errorf("error %v, want one saying %q", err, tc.problem)
				}
				return
			}
			var text []string
			for _, c := range got {
				text = append(text, fmt.Sprintf("%s=%v", c.Address, c.After))
			}
			if strings.Join(text, " ") != strings.Join(tc.want, " ") {
				t.Errorf("creates %v, want %v", text, tc.want)
			}
		})
	}
	w := newPlanWatch()
	_, _ = w.Write([]byte(uiLine("random_id.r", "random_id", "create")))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := w.creates(ctx, planned); err == nil {
		t.Error("creates answered before the plan's summary")
	}
}

// slicesOf cuts s into pieces of n bytes.
func slicesOf(s string, n int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for len(s) > 0 {
			k := min(n, len(s))
			if !yield(s[:k]) {
				return
			}
			s = s[k:]
		}
	}
}
