package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LastUseAnnotation, on a runner Deployment, is when a controller last used the runner
// (RFC 3339): every replica of the controller reads it before scaling the runner to zero.
const LastUseAnnotation = "terraplane.io/runner-last-use"

// poolState is what Deployments keeps of one pool.
type poolState struct {
	launch   sync.Mutex // held while a Launch looks at the runner's objects
	client   *Client
	stamped  time.Time // when Launch last stamped the Deployment as used
	inflight int       // runs sent and not yet answered
	last     time.Time // when a run last ended
}

// state is pool's state, made on first use.
func (d *Deployments) state(pool PoolRef) *poolState {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pools == nil {
		d.pools = map[PoolRef]*poolState{}
	}
	st := d.pools[pool]
	if st == nil {
		st = &poolState{}
		d.pools[pool] = st
	}
	return st
}

// fresh returns st's client, counting a run in flight, when it has one and stamped the
// runner's Deployment recently enough that no controller scales it to zero meanwhile.
func (d *Deployments) fresh(st *poolState, now time.Time) *Client {
	d.mu.Lock()
	defer d.mu.Unlock()
	if st.client == nil || (d.IdleTTL > 0 && now.Sub(st.stamped) >= reapPeriod(d.IdleTTL)) {
		return nil
	}
	st.inflight++
	return st.client
}

// end counts a run of st as ended.
func (d *Deployments) end(st *poolState) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st.inflight = max(0, st.inflight-1)
	st.last = time.Now()
}

// reapPeriod is how often Reap looks, and how stale a Deployment's stamp may grow before
// Launch stamps it again: a quarter of the idle TTL, at most a minute.
func reapPeriod(ttl time.Duration) time.Duration { return min(ttl/4, time.Minute) }

// Reap scales to zero, every reapPeriod until ctx ends, the runners no run has used for
// IdleTTL. It returns at once without IdleTTL.
func (d *Deployments) Reap(ctx context.Context) error {
	if d.IdleTTL <= 0 {
		<-ctx.Done()
		return nil
	}
	d.mu.Lock()
	d.since = time.Now()
	d.mu.Unlock()
	tick := time.NewTicker(reapPeriod(d.IdleTTL))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if _, err := d.ReapOnce(ctx, time.Now()); err != nil {
				d.Log.Error(err, "cannot scale idle runners to zero")
			}
		}
	}
}

// ReapOnce scales to zero the runner Deployments, in Namespaces, that no run has used
// for IdleTTL as of now, and returns their pools. A runner with a run of this controller
// in flight is stamped as used instead, for the other replicas of the controller.
func (d *Deployments) ReapOnce(ctx context.Context, now time.Time) ([]PoolRef, error) {
	namespaces := d.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	var scaled []PoolRef
	for _, ns := range namespaces {
		deps, err := d.runners(ctx, ns)
		if err != nil {
			return scaled, err
		}
		for i := range deps {
			dep := &deps[i]
			pool := PoolRef{Namespace: dep.Namespace, Name: dep.Labels[PoolLabel]}
			if pool.Name == "" || !scaledUp(dep) {
				continue
			}
			done, err := d.reapOne(ctx, pool, dep, now)
			if err != nil {
				return scaled, err
			}
			if done {
				scaled = append(scaled, pool)
			}
		}
	}
	return scaled, nil
}

// reapOne scales dep, pool's runner, to zero when it has been idle for IdleTTL, or
// stamps it as used when this controller has a run in flight there.
func (d *Deployments) reapOne(ctx context.Context, pool PoolRef, dep *appsv1.Deployment, now time.Time) (bool, error) {
	st := d.state(pool)
	if !st.launch.TryLock() { // a Launch is looking at it: in use
		return false, nil
	}
	defer st.launch.Unlock()
	d.mu.Lock()
	busy, last := st.inflight > 0, later(st.last, d.since)
	d.mu.Unlock()
	stamp := lastUse(dep)
	if busy {
		if now.Sub(stamp) < reapPeriod(d.IdleTTL) {
			return false, nil
		}
		patch := client.MergeFrom(dep.DeepCopy())
		stampLastUse(dep, now)
		return false, client.IgnoreNotFound(d.Client.Patch(ctx, dep, patch))
	}
	if now.Sub(later(last, stamp)) < d.IdleTTL {
		return false, nil
	}
	dep.Spec.Replicas = ptr.To(int32(0))
	// an update, not a patch: a Deployment another replica stamped since the list is
	// changed, and kept
	if err := d.Client.Update(ctx, dep); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("scale runner deployment %s/%s to zero: %w", dep.Namespace, dep.Name, err)
	}
	d.mu.Lock()
	st.client = nil
	d.mu.Unlock()
	d.Log.Info("runner scaled to zero", "pool", pool.String(), "idle", now.Sub(later(last, stamp)).Round(time.Second).String())
	return true, nil
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// lastUse is when dep was stamped as used; zero when it was not.
func lastUse(dep *appsv1.Deployment) time.Time {
	t, err := time.Parse(time.RFC3339, dep.Annotations[LastUseAnnotation])
	if err != nil {
		return time.Time{}
	}
	return t
}

// stampLastUse records on dep that it was used at t.
func stampLastUse(dep *appsv1.Deployment, t time.Time) {
	if dep.Annotations == nil {
		dep.Annotations = map[string]string{}
	}
	dep.Annotations[LastUseAnnotation] = t.UTC().Format(time.RFC3339)
}

// anchor is the owner reference of every object made for a pool: the ClusterRole
// RunnerClusterRole, which the chart installs with runner Deployments and removes on
// uninstall.
func (d *Deployments) anchor(ctx context.Context) (metav1.OwnerReference, error) {
	role := &rbacv1.ClusterRole{}
	if err := d.Client.Get(ctx, client.ObjectKey{Name: RunnerClusterRole}, role); err != nil {
		return metav1.OwnerReference{}, fmt.Errorf("the runners' owner, ClusterRole %s: %w", RunnerClusterRole, err)
	}
	return metav1.OwnerReference{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole", Name: role.Name, UID: role.UID}, nil
}

// setOwner makes owner the anchor among obj's owners, replacing an earlier anchor (of a
// role since made again), and reports whether that changed obj.
func setOwner(obj metav1.Object, owner metav1.OwnerReference) bool {
	refs := obj.GetOwnerReferences()
	out := make([]metav1.OwnerReference, 0, len(refs)+1)
	for _, r := range refs {
		if r.Kind == owner.Kind && r.Name == owner.Name && r.APIVersion == owner.APIVersion {
			if r.UID == owner.UID {
				return false
			}
			continue
		}
		out = append(out, r)
	}
	obj.SetOwnerReferences(append(out, owner))
	return true
}

// own makes owner an owner of the object at key (read into obj).
func (d *Deployments) own(ctx context.Context, key client.ObjectKey, obj client.Object, owner metav1.OwnerReference) error {
	if err := d.Client.Get(ctx, key, obj); err != nil {
		return err
	}
	if !setOwner(obj, owner) {
		return nil
	}
	return d.Client.Update(ctx, obj)
}

// runners are the runner Deployments of namespace ns ("" for every namespace).
func (d *Deployments) runners(ctx context.Context, ns string) ([]appsv1.Deployment, error) {
	list := &appsv1.DeploymentList{}
	if err := d.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(runnerLabels)); err != nil {
		return nil, fmt.Errorf("list runner deployments: %w", err)
	}
	return list.Items, nil
}

// scaledUp reports whether dep's runner is meant to run: replicas above zero.
func scaledUp(dep *appsv1.Deployment) bool { return ptr.Deref(dep.Spec.Replicas, 1) > 0 }
