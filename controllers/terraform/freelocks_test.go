package terraform

import (
	"testing"
	"time"
)

// TestFreeLocksTrustOnlyRecordsNewerThanTheHold: a lock known free is taken to be free
// still only when it was found free after this replica took the resource's shard, and
// never once a run forgot it.
func TestFreeLocksTrustOnlyRecordsNewerThanTheHold(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name     string
		freedAt  time.Time
		forgot   bool
		heldFrom time.Time
		want     bool
	}{
		{name: "never found free", heldFrom: time.Time{}},
		{name: "found free, sharding off", freedAt: now, heldFrom: time.Time{}, want: true},
		{name: "found free an hour ago, sharding off", freedAt: now.Add(-time.Hour), heldFrom: time.Time{}, want: true},
		{name: "found free after the shard was taken", freedAt: now, heldFrom: now.Add(-time.Minute), want: true},
		{name: "found free before the shard was taken again", freedAt: now.Add(-time.Minute), heldFrom: now},
		{name: "forgotten by a run", freedAt: now, forgot: true, heldFrom: time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f freeLocks
			if !tc.freedAt.IsZero() {
				f.free("u", tc.freedAt)
			}
			if tc.forgot {
				f.forget("u")
			}
			if got := f.known("u", tc.heldFrom); got != tc.want {
				t.Errorf("known = %v, want %v", got, tc.want)
			}
		})
	}
}
