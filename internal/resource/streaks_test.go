package resource

import (
	"errors"
	"testing"
	"time"

	common "terraplane.io/terraplane/apis/common/v1alpha1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestStreaksReportAndBackOff: a few stale outcomes are retried quietly; a streak is
// reported with a growing wait; any other outcome ends the streak.
func TestStreaksReportAndBackOff(t *testing.T) {
	var s Streaks
	exists := apierrors.NewAlreadyExists(schema.GroupResource{Resource: "secrets"}, "conn")
	var last time.Duration
	for i := 1; i <= 8; i++ {
		o := s.Classify("u", exists, Retries{})
		if i < staleLimit {
			if !o.Stale() || o.Requeue != time.Second {
				t.Fatalf("stale outcome %d: %+v, want a quiet retry in a second", i, o)
			}
			continue
		}
		if o.Synced != metav1.ConditionFalse || o.Reason != common.ReasonWriteConflict || o.Requeue <= last {
			t.Fatalf("stale outcome %d: %+v, want it reported, waiting longer than %s", i, o, last)
		}
		last = o.Requeue
	}
	if o := s.Classify("other", exists, Retries{}); !o.Stale() {
		t.Errorf("another object's first stale outcome is reported: %+v", o)
	}
	if o := s.Classify("u", errors.New("boom"), Retries{}); o.Reason != common.ReasonReconcileError {
		t.Fatalf("a failure: %+v", o)
	}
	if o := s.Classify("u", exists, Retries{}); !o.Stale() {
		t.Errorf("a streak broken by another outcome starts over: %+v", o)
	}
}
