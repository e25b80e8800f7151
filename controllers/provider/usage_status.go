package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Reasons of the InUse condition.
const (
	// ReasonInUse: objects use the provider.
	ReasonInUse = "InUse"
	// ReasonUnused: nothing uses the provider.
	ReasonUnused = "Unused"
	// ReasonDeletionBlocked: the provider was deleted, and waits until nothing uses it.
	ReasonDeletionBlocked = "DeletionBlocked"
)

// maxNamedUsers caps how many users the InUse message names.
const maxNamedUsers = 10

// recountEvery spaces out status writes that only recount a provider's users: every
// write is an event for whatever watches providers, and a burst of new resources would
// otherwise write once per resource.
const recountEvery = 10 * time.Second

// finish ends a reconcile through resource.Classify: an error is retried (a stale cache
// shortly and quietly, anything else with backoff); success writes the users count and
// the InUse condition through the Finisher, with one event when a deletion starts to
// wait. A write that changes only the count and names waits until recountEvery has
// passed since the last one.
func (r *Reconciler) finish(ctx context.Context, p Provider, users []user, err error) (ctrl.Result, error) {
	o := resource.Classify(err, resource.Retries{})
	if !o.Succeeded() {
		return o.Result()
	}
	orig := p.DeepCopyObject().(Provider)
	notes, wait, write := r.recordUsers(p, orig, users)
	if !write {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	return r.write(ctx, p, orig, o, notes)
}

// recordUsers records the users count and the InUse condition, and says whether to
// write them: not when nothing changed, nor, for a recount alone, before recountEvery has
// passed since the last write (wait says how long is left). A deletion that starts to
// wait is announced.
func (r *Reconciler) recordUsers(p, orig Provider, users []user) (notes []resource.Note, wait time.Duration, write bool) {
	st := p.GetProviderStatus()
	st.Users = len(users)
	status, reason, msg := inUse(r.gvk.Kind, users, !p.GetDeletionTimestamp().IsZero())
	before := meta.FindStatusCondition(orig.GetProviderStatus().Conditions, common.TypeInUse)
	changed := resource.SetCondition(&st.Conditions, p.GetGeneration(), common.TypeInUse, status, reason, msg)
	if !changed && orig.GetProviderStatus().Users == st.Users {
		return nil, 0, false
	}
	if before != nil && before.Status == status && before.Reason == reason {
		if last, ok := r.reported.Load(client.ObjectKeyFromObject(p)); ok {
			if wait := recountEvery - time.Since(last.(time.Time)); wait > 0 {
				return nil, wait, false
			}
		}
	}
	if changed && reason == ReasonDeletionBlocked {
		notes = []resource.Note{{Type: corev1.EventTypeWarning, Reason: reason, Message: msg}}
	}
	return notes, 0, true
}

// write writes the status with the notes, and remembers when. Another controller writes
// conditions of some provider kinds (Ready of a Kubernetes ProviderConfig): the lock keeps
// either from undoing the other's.
func (r *Reconciler) write(ctx context.Context, p, orig Provider, o resource.Outcome, notes []resource.Note) (ctrl.Result, error) {
	result, err := resource.Finisher{Client: r.client, Recorder: r.recorder, Guarded: true}.Finish(ctx, p, orig, o, notes)
	if err == nil && result.RequeueAfter == 0 { // a write that lost its race asks to run again
		r.reported.Store(client.ObjectKeyFromObject(p), time.Now())
	}
	return result, err
}

// inUse derives the InUse condition: who uses the provider, and what a deletion waits for.
func inUse(kind string, users []user, deleting bool) (metav1.ConditionStatus, string, string) {
	if len(users) == 0 {
		return metav1.ConditionFalse, ReasonUnused, "nothing uses this " + kind
	}
	names := make([]string, 0, maxNamedUsers)
	for i, u := range users {
		if i == maxNamedUsers {
			names = append(names, fmt.Sprintf("and %d more", len(users)-maxNamedUsers))
			break
		}
		names = append(names, u.String())
	}
	used := fmt.Sprintf("used by %d: %s", len(users), strings.Join(names, ", "))
	if !deleting {
		return metav1.ConditionTrue, ReasonInUse, used
	}
	return metav1.ConditionTrue, ReasonDeletionBlocked, fmt.Sprintf(
		"deletion waits until nothing uses this %s; %s. Delete them (or their claims) first, or point them at another %s", kind, used, kind)
}
