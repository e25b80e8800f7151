package main

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestEventLine: terraplane dev prints each controller event as one line a person reads,
// warnings marked, the note's lines joined.
func TestEventLine(t *testing.T) {
	at := time.Date(2026, 1, 5, 10, 4, 5, 0, time.Local)
	ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(at)}, Type: "Warning", Reason: "DestructiveChangeRefused",
		Note: "the plan replaces:\nmodule.this.aws_s3_bucket.this", Regarding: corev1.ObjectReference{Kind: "S3Bucket", Namespace: "terraplane-system", Name: "photos"}}
	want := "10:04:05 ! S3Bucket terraplane-system/photos: DestructiveChangeRefused: the plan replaces:; module.this.aws_s3_bucket.this"
	if got := eventLine(ev); got != want {
		t.Errorf("eventLine = %q, want %q", got, want)
	}
	ev.Type = "Normal"
	if got := eventLine(ev); got[9] != ' ' {
		t.Errorf("a Normal event is marked: %q", got)
	}
}

// TestLogFlags: controller binds the zap flags and --debug; dev speaks text unless
// --log-format=json.
func TestLogFlags(t *testing.T) {
	controller := controllerCommand()
	for _, flag := range []string{"zap-log-level", "zap-encoder", "zap-stacktrace-level", "debug"} {
		if controller.Flags().Lookup(flag) == nil {
			t.Errorf("terraplane controller has no --%s", flag)
		}
	}
	dev := devCommand()
	if f := dev.Flags().Lookup("log-format"); f == nil || f.DefValue != "text" {
		t.Errorf("terraplane dev --log-format = %v, want a flag defaulting to text", f)
	}
}

// TestDevSink: dev's text log prints an error as one line naming where it came from, and
// leaves out a reconciler's errors, which conditions and events already say once.
func TestDevSink(t *testing.T) {
	var buf bytes.Buffer
	log := logr.New(&devSink{out: &buf, mu: &sync.Mutex{}})
	log.WithName("controller").WithName("s3bucket").Error(errors.New("terraform apply: exit status 1\nmore"), "Reconciler error", "S3Bucket", "x")
	log.Info("starting")
	log.WithName("cache").WithValues("k", "v").Error(errors.New("watch failed"), "failed to list")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 || !strings.HasSuffix(lines[0], " ! cache: failed to list: watch failed") {
		t.Errorf("log = %q, want one line for the cache's error", buf.String())
	}
}
