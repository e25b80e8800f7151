package engine

import (
	"strings"
	"testing"
	"time"
)

// hook is one of terraform's -json hook messages about addr.
func hook(typ, addr, action string) string {
	return `{"@level":"info","@message":"` + addr + `: ...","hook":{"resource":{"addr":"` + addr + `","resource_type":"x"},"action":"` + action + `"},"type":"` + typ + `"}` + "\n"
}

// TestTrackerFollowsOperations: the tracker keeps the operations terraform has started
// and not ended, in the order they started, from output written in arbitrary pieces.
func TestTrackerFollowsOperations(t *testing.T) {
	for name, tc := range map[string]struct {
		stream string
		want   []string // address/action in flight
	}{
		"nothing started": {stream: `{"type":"version","terraform":"1.11.0"}` + "\n"},
		"a create in flight": {stream: hook("apply_start", "aws_sqs_queue.q", "create") + hook("apply_progress", "aws_sqs_queue.q", "create"),
			want: []string{"aws_sqs_queue.q/create"}},
		"a create that completed": {stream: hook("apply_start", "a.b", "create") + hook("apply_complete", "a.b", "create")},
		"a create that failed":    {stream: hook("apply_start", "a.b", "create") + hook("apply_errored", "a.b", "create")},
		"two in flight, the first ended": {stream: hook("apply_start", "a.one", "update") + hook("apply_start", "a.two", "delete") +
			hook("apply_complete", "a.one", "update"), want: []string{"a.two/delete"}},
		"a refresh in flight is a read": {stream: hook("refresh_start", "data.x.y", ""), want: []string{"data.x.y/read"}},
		"a line that is not JSON":       {stream: "Terraform has been successfully initialized\n" + hook("apply_start", "m.a", "create"), want: []string{"m.a/create"}},
	} {
		t.Run(name, func(t *testing.T) {
			tr := newTracker("apply", time.Now)
			// written in pieces of 7 bytes: a line may be cut anywhere
			for s := tc.stream; s != ""; {
				n := min(7, len(s))
				if _, err := tr.Write([]byte(s[:n])); err != nil {
					t.Fatal(err)
				}
				s = s[n:]
			}
			var got []string
			for _, op := range tr.activity().Operations {
				got = append(got, op.Address+"/"+op.Action)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("in flight %v, want %v", got, tc.want)
			}
		})
	}
}

// TestActivityDescribe: the one-line account names the oldest operation, how long it
// has run, and how many more are in flight.
func TestActivityDescribe(t *testing.T) {
	start := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	now := start.Add(6*time.Minute + 10*time.Second + 400*time.Millisecond)
	for name, tc := range map[string]struct {
		act  Activity
		want string
	}{
		"no command":                 {Activity{}, ""},
		"a command, no resource yet": {Activity{Verb: "plan", Since: start}, "terraform plan running for 6m10s"},
		"one create": {Activity{Verb: "apply", Since: start, Operations: []Operation{{Address: "aws_sqs_queue.q", Action: "create", Since: start}}},
			"terraform is creating aws_sqs_queue.q for 6m10s"},
		"a destroy and two more": {Activity{Verb: "destroy", Since: start, Operations: []Operation{{Address: "a.x", Action: "delete", Since: start},
			{Address: "a.y", Action: "delete", Since: now}, {Address: "a.z", Action: "delete", Since: now}}},
			"terraform is destroying a.x for 6m10s (and 2 more in flight)"},
	} {
		if got := tc.act.Describe(now); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

// TestActivityEndsWithItsCommand: a workspace's activity is there while its command
// runs and gone once it ends; another workspace's is its own.
func TestActivityEndsWithItsCommand(t *testing.T) {
	var a activities
	tr, done := a.start("w1", "apply")
	if _, err := tr.Write([]byte(hook("apply_start", "a.b", "create"))); err != nil {
		t.Fatal(err)
	}
	if got := a.of("w1"); got.Verb != "apply" || len(got.Operations) != 1 {
		t.Errorf("w1 while running: %+v", got)
	}
	if got := a.of("w2"); got.Running() {
		t.Errorf("w2 runs nothing, got %+v", got)
	}
	done()
	if got := a.of("w1"); got.Running() {
		t.Errorf("w1 after its command ended: %+v", got)
	}
}
