package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/statelock"
)

// killResult is what one replica, killed with SIGKILL while the claims were being made,
// left behind (-kill-at).
type killResult struct {
	// at is when it was killed, since the run's start, with readyThen claims Ready.
	at        time.Duration
	readyThen int
	// shards is how long after the kill every shard was held by a replica still alive;
	// leader is how long until the leader's Lease was renewed by one.
	shards, leader time.Duration
	// duplicates counts the claims served by more than one managed resource and the
	// managed resources no claim names; stuck counts the state locks still held once
	// every claim was Ready.
	duplicates, stuck int
	// interrupted counts the creates the kill cut off before terraform recorded them,
	// which stopped at CreateInterrupted; the bench let each create again, as its user
	// would (a terraform_data has nothing to adopt).
	interrupted int
}

// killMidway kills replica 0 of the fleet once a fraction at of the n claims are Ready,
// then measures how long the others take to hold its shards and the leadership, and
// answers the creates it interrupted (see createAgain) until done is closed. It records
// into res.
func (h *harness) killMidway(ctx context.Context, rw *readyWatch, n int, at float64, res *killResult, done <-chan struct{}) error {
	for rw.readyCount() < int(at*float64(n)) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	leaderBefore, err := h.leaderLease(ctx)
	if err != nil {
		return err
	}
	killed := time.Now()
	res.at, res.readyThen = killed.Sub(rw.start), rw.readyCount()
	h.fleet.kill(0)
	dead := "replica-0"
	for res.shards == 0 || res.leader == 0 {
		if res.shards == 0 && h.shardsHeldBut(ctx, dead) {
			res.shards = time.Since(killed)
		}
		if res.leader == 0 {
			if l, err := h.leaderLease(ctx); err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.After(killed) &&
				(ptr.Deref(l.Spec.HolderIdentity, "") != ptr.Deref(leaderBefore.Spec.HolderIdentity, "") || !l.Spec.RenewTime.Time.Equal(leaderBefore.Spec.RenewTime.Time)) {
				res.leader = time.Since(killed)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	answered := map[string]bool{}
	for {
		if err := h.createAgain(ctx, answered); err != nil {
			return err
		}
		res.interrupted = len(answered)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			return nil
		case <-time.After(2 * time.Second):
		}
	}
}

// createAgain sets terraplane.io/create-again on each managed resource of the claims
// whose create a kill interrupted (Synced=False, CreateInterrupted) and that answered
// does not hold yet: what its user does when there is nothing to adopt.
func (h *harness) createAgain(ctx context.Context, answered map[string]bool) error {
	mgs := &unstructured.UnstructuredList{}
	mgs.SetAPIVersion(terraformv1.GroupVersion.String())
	mgs.SetKind("ModuleList")
	if err := h.c.List(ctx, mgs, client.InNamespace(adminNS)); err != nil {
		return fmt.Errorf("list managed resources: %w", err)
	}
	for i := range mgs.Items {
		mg := &mgs.Items[i]
		conds, _, _ := unstructured.NestedSlice(mg.Object, "status", "conditions")
		interrupted := slices.ContainsFunc(conds, func(c any) bool {
			m, _ := c.(map[string]any)
			return m["type"] == common.TypeSynced && m["reason"] == common.ReasonCreateInterrupted
		})
		if !interrupted || answered[mg.GetName()] {
			continue
		}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, common.CreateAgainAnnotation)
		if err := h.c.Patch(ctx, mg, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			return fmt.Errorf("create %s again: %w", mg.GetName(), err)
		}
		answered[mg.GetName()] = true
	}
	return nil
}

// leaderLease is the controllers' leader election Lease.
func (h *harness) leaderLease(ctx context.Context) (*coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{}
	if err := h.c.Get(ctx, types.NamespacedName{Namespace: fleetNamespace, Name: "terraplane-controller"}, l); err != nil {
		return nil, fmt.Errorf("read the leader's Lease: %w", err)
	}
	return l, nil
}

// shardsHeldBut reports whether every shard Lease is held by a replica other than dead.
func (h *harness) shardsHeldBut(ctx context.Context, dead string) bool {
	leases := &coordinationv1.LeaseList{}
	if err := h.c.List(ctx, leases, client.InNamespace(fleetNamespace)); err != nil {
		return false
	}
	held := 0
	for _, l := range leases.Items {
		if !strings.HasPrefix(l.Name, "terraplane-shard-") {
			continue
		}
		if holder := ptr.Deref(l.Spec.HolderIdentity, ""); holder == "" || holder == dead {
			return false
		}
		held++
	}
	return held == fleetShards
}

// leftovers counts, once every claim is Ready, the duplicates and the stuck state locks a
// killed replica could have left (see killResult).
func (h *harness) leftovers(ctx context.Context, names []string, res *killResult) error {
	objs, err := h.managedOf(ctx, names)
	if err != nil {
		return err
	}
	served := map[string]bool{}
	for _, o := range objs {
		served[o.GetNamespace()+"/"+o.GetName()] = true
	}
	list := &storagev1.BucketList{}
	if err := h.c.List(ctx, list, client.InNamespace(appNS)); err != nil {
		return fmt.Errorf("list claims: %w", err)
	}
	mgs := &unstructured.UnstructuredList{}
	mgs.SetGroupVersionKind(objs[0].GroupVersionKind().GroupVersion().WithKind(objs[0].GetKind() + "List"))
	if err := h.c.List(ctx, mgs, client.InNamespace(objs[0].GetNamespace())); err != nil {
		return fmt.Errorf("list managed resources: %w", err)
	}
	byClaim := map[string]int{}
	for _, mg := range mgs.Items {
		claim, _, _ := unstructured.NestedString(mg.Object, "spec", "claimRef", "name")
		byClaim[claim]++
		if !served[mg.GetNamespace()+"/"+mg.GetName()] {
			res.duplicates++ // a managed resource no claim names
		}
	}
	for _, b := range list.Items {
		if byClaim[b.Name] > 1 {
			res.duplicates++ // a claim served twice
		}
	}
	held, err := statelock.HeldIn(ctx, h.c, objs[0].GetNamespace())
	if err != nil {
		return err
	}
	res.stuck += len(held)
	return nil
}

// kill ends replica i with SIGKILL, as a node lost or an OOM kill would, keeping the CPU
// it had spent in the fleet's, and leaves the fleet to the others.
func (f *fleet) kill(i int) {
	if c, err := procCPU(f.cmds[i].Process.Pid); err == nil {
		f.deadCPU.self += c.self
		f.deadCPU.children += c.children
	}
	_ = f.cmds[i].Process.Signal(syscall.SIGKILL)
	_, _ = f.cmds[i].Process.Wait()
	f.cmds = append(f.cmds[:i:i], f.cmds[i+1:]...)
	f.metrics = append(f.metrics[:i:i], f.metrics[i+1:]...)
	f.logs = append(f.logs[:i:i], f.logs[i+1:]...)
}

// killTable renders, for the rows with a replica killed mid-run, when it was killed and
// what the others made of its work.
func killTable(b *strings.Builder, rows []row) {
	header := false
	for _, r := range rows {
		k := r.tp.kill
		if k == nil {
			continue
		}
		if !header {
			b.WriteString("\nOne replica killed (SIGKILL) mid-run; the others carry on without it.\n\n" +
				"| module | N | controller | killed at (s) | claims Ready then | its shards held by others after (s) | leader renewed after (s) | creates cut off (CreateInterrupted, created again by the bench) | duplicates (claims served twice, resources no claim names) | state locks still held once all were Ready |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
			header = true
		}
		fmt.Fprintf(b, "| %s | %d | %s | %.1f | %d | %.1f | %.1f | %d | %d | %d |\n", r.variant, r.n, r.start,
			k.at.Seconds(), k.readyThen, k.shards.Seconds(), k.leader.Seconds(), k.interrupted, k.duplicates, k.stuck)
	}
}
