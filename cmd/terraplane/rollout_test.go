package main

import (
	"testing"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// TestUndoTarget: undo goes back to the newest revision older than the one rolling out,
// or to the one named (by name or number); a name the class does not keep, or nothing
// older, is refused.
func TestUndoTarget(t *testing.T) {
	revs := []common.RevisionCount{{Name: "c-e", Revision: 5}, {Name: "c-c", Revision: 3}, {Name: "c-b", Revision: 2}}
	rc := func(latest string, rolling string) *common.ClassRevisions {
		out := &common.ClassRevisions{LatestRevision: latest, Revisions: revs}
		if rolling != "" {
			out.Rollout = &common.RolloutStatus{Revision: rolling}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		rc      *common.ClassRevisions
		to      string
		want    string
		wantErr bool
	}{
		{"the one before the latest", rc("c-e", ""), "", "c-c", false},
		{"the one before the revision rolling out", rc("c-e", "c-c"), "", "c-b", false},
		{"by number", rc("c-e", ""), "2", "c-b", false},
		{"by name", rc("c-e", ""), "c-e", "c-e", false},
		{"one the class does not keep", rc("c-e", ""), "4", "", true},
		{"nothing older", rc("c-e", "c-b"), "", "", true},
	} {
		got, err := undoTarget(tc.rc, tc.to)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: %q, %v; want %q (error %v)", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}
