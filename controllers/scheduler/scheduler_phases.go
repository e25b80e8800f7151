package scheduler

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/controllers/kubernetes"
	"terraplane.io/terraplane/internal/resource"
)

// Unschedulable is why an application has no cluster: a reason and an actionable message.
type Unschedulable struct {
	// Reason is a CamelCase condition reason.
	Reason string
	// Message says what would make the application schedulable.
	Message string
}

// place chooses the application's cluster, or says why there is none.
func (r *Reconciler) place(ctx context.Context, app *workloadv1.KubernetesApplication) (*workloadv1.ClusterReference, string, error) {
	if ref := app.Spec.ProviderConfigRef; ref != nil {
		return r.placeOnProviderConfig(ctx, app, ref)
	}
	sel, err := metav1.LabelSelectorAsSelector(app.Spec.ClusterSelector)
	if app.Spec.ClusterSelector == nil {
		sel, err = labels.Everything(), nil
	}
	if err != nil {
		return nil, "", &Unschedulable{Reason: "InvalidClusterSelector", Message: fmt.Sprintf("spec.clusterSelector: %v", err)}
	}
	claims := &computev1.KubernetesClusterList{}
	if err := r.client.List(ctx, claims, client.InNamespace(app.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, "", fmt.Errorf("list clusters: %w", err)
	}
	var ready []computev1.KubernetesCluster
	var notReady []string
	for _, c := range claims.Items {
		if claimUnusable(&c) == "" {
			ready = append(ready, c)
		} else {
			notReady = append(notReady, c.Name)
		}
	}
	pools, err := r.autoscaled(ctx, app.Namespace)
	if err != nil {
		return nil, "", err
	}
	if len(ready) == 0 {
		return nil, "", growing(noCluster(app.Namespace, sel, notReady), pools, sel)
	}
	return r.leastLoaded(ctx, app.Namespace, sel, ready, pools)
}

// placeOnProviderConfig places the application on the cluster a ProviderConfig reaches.
func (r *Reconciler) placeOnProviderConfig(ctx context.Context, app *workloadv1.KubernetesApplication, ref *workloadv1.ProviderConfigReference) (*workloadv1.ClusterReference, string, error) {
	key := client.ObjectKey{Namespace: app.Namespace, Name: ref.Name}
	if ref.Namespace != "" {
		key.Namespace = ref.Namespace
	}
	pc := &kubernetesv1.ProviderConfig{}
	if err := r.client.Get(ctx, key, pc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", &Unschedulable{Reason: "ProviderConfigNotFound", Message: fmt.Sprintf("%s %s named by spec.providerConfigRef does not exist", kubernetesv1.ProviderConfigResource, key)}
		}
		return nil, "", fmt.Errorf("get providerconfig %s: %w", key, err)
	}
	if err := kubernetes.CheckProviderConfig(ctx, r.client, pc, "spec.providerConfigRef", app.Namespace); err != nil {
		return nil, "", err
	}
	if why := providerConfigUnusable(pc); why != "" {
		return nil, "", &Unschedulable{Reason: "ClusterUnusable", Message: why}
	}
	return &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig, Name: key.Name, Namespace: key.Namespace},
		fmt.Sprintf("placed on %s %s named by spec.providerConfigRef", kubernetesv1.ProviderConfigResource, key), nil
}

// providerConfigUnusable says why pc's cluster cannot take applications (its credentials
// did not reach it, or were not tried yet); empty when it can.
func providerConfigUnusable(pc *kubernetesv1.ProviderConfig) string {
	key := client.ObjectKeyFromObject(pc)
	ready := meta.FindStatusCondition(pc.Status.Conditions, common.TypeReady)
	switch {
	case !pc.DeletionTimestamp.IsZero():
		return fmt.Sprintf("%s %s is being deleted", kubernetesv1.ProviderConfigResource, key)
	case ready == nil:
		return fmt.Sprintf("%s %s has not reached its cluster yet", kubernetesv1.ProviderConfigResource, key)
	case ready.Status != metav1.ConditionTrue:
		return fmt.Sprintf("%s %s cannot reach its cluster: %s: %s", kubernetesv1.ProviderConfigResource, key, ready.Reason, ready.Message)
	}
	return ""
}

// claimUnusable says why a KubernetesCluster claim cannot take applications; empty when
// it can. Its Ready mirrors the bound Cluster's, which is True only while the cluster
// answers with its credentials.
func claimUnusable(c *computev1.KubernetesCluster) string {
	key := client.ObjectKeyFromObject(c)
	ready := meta.FindStatusCondition(c.Status.Conditions, common.TypeReady)
	switch {
	case !c.DeletionTimestamp.IsZero():
		return fmt.Sprintf("KubernetesCluster %s is being deleted", key)
	case c.Status.BindingPhase != common.BindingPhaseBound:
		return fmt.Sprintf("KubernetesCluster %s is not Bound", key)
	case c.Spec.WriteConnectionSecretToRef == nil:
		return fmt.Sprintf("KubernetesCluster %s has no connection Secret", key)
	case ready == nil || ready.Status != metav1.ConditionTrue:
		msg := "not reported yet"
		if ready != nil {
			msg = ready.Reason + ": " + ready.Message
		}
		return fmt.Sprintf("KubernetesCluster %s is not Ready (%s)", key, msg)
	}
	return ""
}

// unusable says why the cluster ref names cannot take applications from namespace ns
// (including that it does not allow them); empty when it can.
func (r *Reconciler) unusable(ctx context.Context, ns string, ref workloadv1.ClusterReference) (string, error) {
	key := client.ObjectKey{Namespace: refNamespace(ns, ref), Name: ref.Name}
	var err error
	why := ""
	switch ref.Kind {
	case workloadv1.ClusterKindProviderConfig:
		pc := &kubernetesv1.ProviderConfig{}
		if err = r.client.Get(ctx, key, pc); err == nil {
			err = kubernetes.CheckProviderConfig(ctx, r.client, pc, "status.clusterRef", ns)
		}
		if err == nil {
			why = providerConfigUnusable(pc)
		}
	default:
		c := &computev1.KubernetesCluster{}
		if err = kubernetes.CheckClaim(key, "status.clusterRef", ns); err == nil {
			err = r.client.Get(ctx, key, c)
		}
		if err == nil {
			why = claimUnusable(c)
		}
	}
	if u, ok := resource.AsUserError(err); ok {
		return u.Message, nil
	}
	if apierrors.IsNotFound(err) {
		return fmt.Sprintf("%s %s does not exist", ref.Kind, key), nil
	}
	if err != nil {
		return "", fmt.Errorf("get cluster %s: %w", key, err)
	}
	return why, nil
}

// unplace takes an application off its cluster when that cluster turned unusable and
// none of the application's resources was submitted there (a submitted one would be
// left behind); moved reports whether it did, and the application is to be placed again.
func (r *Reconciler) unplace(ctx context.Context, app *workloadv1.KubernetesApplication) (moved bool, err error) {
	ref := *app.Status.ClusterRef
	why, err := r.unusable(ctx, app.Namespace, ref)
	if why == "" || err != nil {
		return false, err
	}
	submitted, err := r.submittedAny(ctx, app)
	if submitted || err != nil {
		return false, err
	}
	r.recorder.Eventf(app, corev1.EventTypeNormal, ReasonRescheduling,
		"%s; nothing was submitted to it, so the application is placed again", why)
	app.Status.ClusterRef = nil
	return true, nil
}

// submittedAny reports whether any resource of app reached a cluster (its status names
// the cluster once a first object or Secret was written there). It reads the API server,
// not the cache: a submission the cache has not seen yet must not be moved away from.
func (r *Reconciler) submittedAny(ctx context.Context, app *workloadv1.KubernetesApplication) (bool, error) {
	list := &workloadv1.KubernetesApplicationResourceList{}
	if err := r.reader.List(ctx, list, client.InNamespace(app.Namespace)); err != nil {
		return false, fmt.Errorf("list resources: %w", err)
	}
	for _, res := range list.Items {
		if owner := metav1.GetControllerOf(&res); owner != nil && owner.UID == app.UID && res.Status.ClusterRef != nil {
			return true, nil
		}
	}
	return false, nil
}

// refNamespace is the namespace a cluster reference points into; ns is the referrer's.
func refNamespace(ns string, ref workloadv1.ClusterReference) string {
	if ref.Namespace != "" {
		return ref.Namespace
	}
	return ns
}

// Error returns the reason and the message.
func (u *Unschedulable) Error() string { return u.Reason + ": " + u.Message }

// UnavailableReason makes an Unschedulable a resource.Unavailable: no cluster is usable.
func (u *Unschedulable) UnavailableReason() string { return ReasonUnschedulable }

func noCluster(ns string, sel labels.Selector, notReady []string) error {
	if len(notReady) == 0 {
		return &Unschedulable{Reason: "NoMatchingCluster", Message: fmt.Sprintf("no KubernetesCluster in namespace %s matches clusterSelector %q; create one or relabel a cluster", ns, sel.String())}
	}
	sort.Strings(notReady)
	return &Unschedulable{Reason: "NoReadyCluster", Message: fmt.Sprintf("KubernetesClusters %s match clusterSelector %q but none is Bound and Ready with a connection Secret", strings.Join(notReady, ", "), sel.String())}
}
