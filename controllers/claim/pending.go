package claim

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/resource"
)

// pendingRefs remembers the claims whose resourceRef this reconciler has just written,
// until its cache shows the write. The new resource's event can queue the claim before
// the claim's own update reaches the cache; a reconcile of that stale copy would
// provision again and meet AlreadyExists and a conflict. The update's event queues the
// claim again anyway, so such a reconcile can stop at once.
type pendingRefs struct{ m sync.Map } // types.NamespacedName → types.UID

// add records that claim's resourceRef was written (if claim holds one).
func (p *pendingRefs) add(claim resource.Claim) {
	if claim.GetClaimSpec().ResourceRef != nil {
		p.m.Store(client.ObjectKeyFromObject(claim), claim.GetUID())
	}
}

// stale reports whether claim is a cached copy older than a resourceRef write; a copy
// that shows the write (or is another object of the same name) clears the record.
func (p *pendingRefs) stale(claim resource.Claim) bool {
	key := client.ObjectKeyFromObject(claim)
	uid, ok := p.m.Load(key)
	if !ok {
		return false
	}
	if uid.(types.UID) == claim.GetUID() && claim.GetClaimSpec().ResourceRef == nil {
		return true
	}
	p.m.Delete(key)
	return false
}

// forget drops the record of a claim that is gone.
func (p *pendingRefs) forget(key types.NamespacedName) { p.m.Delete(key) }
