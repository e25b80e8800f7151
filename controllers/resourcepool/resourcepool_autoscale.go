package resourcepool

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resourcepool"
)

// Reasons of autoscaled pools' events on applications.
const (
	// ReasonClusterAdded: the pool made a member for the application.
	ReasonClusterAdded = "ClusterAdded"
	// ReasonPoolAtMax: the application waits, and the pool is at autoscale.max.
	ReasonPoolAtMax = "PoolAtMax"
	// unschedulable is the scheduler's reason of Scheduled=False when no cluster can
	// take an application (scheduler.ReasonUnschedulable).
	unschedulable = "Unschedulable"
)

// autoscale sizes an autoscaled pool: it reads the namespace's applications, and makes
// or removes members as DecideAutoscale says. Each decision is an event on the pool, and
// one on every application a member is made for.
func (r *Reconciler) autoscale(ctx context.Context, p *pass) error {
	spare := p.count()
	list := &workloadv1.KubernetesApplicationList{}
	if err := r.reader.List(ctx, list, client.InNamespace(p.pool.Namespace)); err != nil {
		return fmt.Errorf("list applications: %w", err)
	}
	apps := map[string]*workloadv1.KubernetesApplication{}
	in := resourcepool.AutoscaleInput{Spec: *p.pool.Spec.Autoscale, TemplateLabels: p.pool.Spec.ClaimTemplate.Labels,
		MaxConcurrent: p.pool.Spec.MaxConcurrent, Members: spare, IdleSince: map[string]time.Time{}, Now: time.Now()}
	for i := range list.Items {
		a := &list.Items[i]
		apps[a.Name] = a
		in.Applications = append(in.Applications, application(a, p.pool.Namespace))
	}
	for _, c := range p.pool.Status.Clusters {
		if c.IdleSince != nil {
			in.IdleSince[c.Name] = c.IdleSince.Time
		}
	}
	d := resourcepool.DecideAutoscale(in)
	p.auto = &d
	ns, name := p.pool.Namespace, p.pool.Name
	// One event per decision and object: the recorder folds events of one reason about
	// one object version into a series that keeps the first message.
	made, err := r.grow(ctx, p, &d)
	if len(made) > 0 {
		p.note(corev1.EventTypeNormal, ReasonScaledUp, "made KubernetesCluster %s (%s)%s", strings.Join(made, ", "), d.Reason, forApps(d.For))
		for _, a := range d.For {
			r.recorder.Eventf(apps[a], corev1.EventTypeNormal, ReasonClusterAdded,
				"ResourcePool %s is adding KubernetesCluster %s for it; the application is placed once a cluster is Ready", name, strings.Join(made, ", "))
		}
	}
	if err != nil {
		return err
	}
	if was := meta.FindStatusCondition(p.pool.Status.Conditions, "Ready"); d.Create == 0 && d.Held == resourcepool.ReasonAtMax && (was == nil || was.Reason != resourcepool.ReasonAtMax) {
		for _, a := range d.For {
			r.recorder.Eventf(apps[a], corev1.EventTypeWarning, ReasonPoolAtMax, "ResourcePool %s is at its max of %d clusters", name, in.Spec.Max)
		}
	}
	var removed []string
	for _, m := range d.Remove {
		// Only the version read: a member changed meanwhile is looked at again first.
		err = r.client.Delete(ctx, m.Object.DeepCopy(), client.Preconditions{UID: &m.UID, ResourceVersion: &m.ResourceVersion})
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			err = nil
			continue
		}
		if err != nil {
			err = fmt.Errorf("remove idle member %s: %w", m.Name, err)
			break
		}
		p.counts.Ready--
		removed = append(removed, m.Name)
		resourcepool.ObserveScale(ns, name, "down", d.Reason, 1)
	}
	if len(removed) > 0 {
		p.note(corev1.EventTypeNormal, ReasonScaledDown, "removed KubernetesCluster %s (%s): it held no application for %s",
			strings.Join(removed, ", "), d.Reason, scaleDownAfter(in.Spec))
	}
	return err
}

// grow makes d.Create members and returns the names of those made.
func (r *Reconciler) grow(ctx context.Context, p *pass, d *resourcepool.AutoscaleDecision) ([]string, error) {
	var made []string
	for range d.Create {
		member, err := r.createMember(ctx, p)
		if err != nil {
			return made, err
		}
		made = append(made, member)
		p.counts.Provisioning++
		d.Clusters = append(d.Clusters, scalingv1.ClusterMember{Name: member})
		resourcepool.ObserveScale(p.pool.Namespace, p.pool.Name, "up", d.Reason, 1)
	}
	return made, nil
}

// application is what the autoscaler needs of one application: its selector, the
// cluster of namespace ns it is placed on, and whether the scheduler found none.
func application(a *workloadv1.KubernetesApplication, ns string) resourcepool.Application {
	out := resourcepool.Application{Name: a.Name}
	if ref := a.Status.ClusterRef; ref != nil {
		if ref.Kind == workloadv1.ClusterKindClaim && (ref.Namespace == "" || ref.Namespace == ns) {
			out.Cluster = ref.Name
		} else {
			out.Cluster = "(" + string(ref.Kind) + ")" // placed elsewhere: neither waiting nor on a member
		}
	}
	if a.Spec.ProviderConfigRef == nil {
		sel, err := metav1.LabelSelectorAsSelector(a.Spec.ClusterSelector)
		if a.Spec.ClusterSelector == nil {
			sel, err = labels.Everything(), nil
		}
		if err == nil {
			out.Selector = sel
		}
	}
	if c := meta.FindStatusCondition(a.Status.Conditions, workloadv1.TypeScheduled); c != nil && c.Status == metav1.ConditionFalse && c.Reason == unschedulable {
		out.Unschedulable = a.DeletionTimestamp.IsZero()
	}
	return out
}

// forApps names the applications a member is made for, for an event.
func forApps(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " for application(s) " + strings.Join(names, ", ")
}

// scaleDownAfter is the pool's idle time before a member is removed.
func scaleDownAfter(a scalingv1.Autoscale) time.Duration {
	if a.ScaleDownAfter != nil {
		return a.ScaleDownAfter.Duration
	}
	return resourcepool.DefaultScaleDownAfter
}

// poolsOf maps an application to the autoscaled pools of its namespace.
func (r *Reconciler) poolsOf(ctx context.Context, obj client.Object) []reconcile.Request {
	list := &scalingv1.ResourcePoolList{}
	if err := r.client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, p := range list.Items {
		if p.Spec.Autoscale != nil {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&p)})
		}
	}
	return reqs
}
