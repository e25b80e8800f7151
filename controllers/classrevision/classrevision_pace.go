package classrevision

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/revision"
)

// tallyEvery is how often at most a class of up to a thousand resources writes a report
// whose only news is its counts (resources per revision and provider version, a
// rollout's progress). A fleet of thousands moving at once then costs one status write
// per class every few seconds rather than one per look; a new revision, a rollout's
// wave, pause or completion, and a condition's new status or reason are written at the
// next look. A fleet made in one burst is small for its first minutes, so this pace is
// what its first thousands cost: 0.01 writes per resource on two cores (0.02 at 10 s).
const tallyEvery = 20 * time.Second

// maxTally caps the pace of a large fleet's counts (see fleetSizes.tally).
const maxTally = 2 * time.Minute

// reportPace remembers when each class last wrote its report.
type reportPace struct {
	m   sync.Map // reconcile.Request → time.Time
	now func() time.Time
}

// wait is how long class req should hold back a report whose only news is its counts
// (tallyOnly), written at most once per every: zero when it may write now.
func (p *reportPace) wait(req reconcile.Request, tallyOnly bool, every time.Duration) time.Duration {
	if !tallyOnly {
		return 0
	}
	last, ok := p.m.Load(req)
	if !ok {
		return 0
	}
	return max(0, every-p.clock().Sub(last.(time.Time)))
}

// wrote notes that class req wrote its report now.
func (p *reportPace) wrote(req reconcile.Request) { p.m.Store(req, p.clock()) }

// clock is the pace's time: now, unless a test set it.
func (p *reportPace) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// tallyOnly reports whether class differs from orig in nothing but its counts: the
// resources on each revision and provider version, and how many a rollout updated (with
// the RolloutPaused message that restates them).
func tallyOnly(orig, class client.Object) bool {
	a, okA := untallied(orig)
	b, okB := untallied(class)
	return okA && okB && equality.Semantic.DeepEqual(a, b)
}

// untallied is a copy of obj, a class, with its counts zeroed; false if obj is no class.
func untallied(obj client.Object) (revision.Class, bool) {
	c, ok := obj.DeepCopyObject().(revision.Class)
	if !ok {
		return nil, false
	}
	rc := c.GetClassRevisions()
	for i := range rc.Revisions {
		rc.Revisions[i].Resources, rc.Revisions[i].Ready, rc.Revisions[i].Pending = 0, 0, 0
	}
	for i := range rc.Providers {
		rc.Providers[i].Resources = 0
	}
	if rc.Rollout != nil {
		rc.Rollout.Updated, rc.Rollout.Total = 0, 0
	}
	conds := *c.GetClassConditions()
	for i := range conds {
		if conds[i].Type == common.TypeRolloutPaused {
			conds[i].Message = "" // restates the rollout's counts; its news are in status.rollout
		}
	}
	return c, true
}
