package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// validate checks what the schema cannot: unique names, labels matching resourceSelector.
func validate(app *workloadv1.KubernetesApplication) error {
	sel, err := metav1.LabelSelectorAsSelector(app.Spec.ResourceSelector)
	if err != nil {
		return resource.UserErrorf("InvalidResourceSelector", "spec.resourceSelector: %v", err)
	}
	seen := map[string]bool{}
	for i, t := range app.Spec.ResourceTemplates {
		if seen[t.Metadata.Name] {
			return resource.UserErrorf("DuplicateTemplate", "spec.resourceTemplates[%d]: name %s is used twice", i, t.Metadata.Name)
		}
		seen[t.Metadata.Name] = true
		if !sel.Matches(labels.Set(t.Metadata.Labels)) {
			return resource.UserErrorf("TemplateNotSelected", "spec.resourceTemplates[%d] (%s): labels %v do not match spec.resourceSelector %s", i, t.Metadata.Name, t.Metadata.Labels, sel)
		}
	}
	return nil
}

// owned lists the resources the application controls.
func (r *ApplicationReconciler) owned(ctx context.Context, app *workloadv1.KubernetesApplication) (map[string]*workloadv1.KubernetesApplicationResource, error) {
	list := &workloadv1.KubernetesApplicationResourceList{}
	if err := r.client.List(ctx, list, client.InNamespace(app.Namespace)); err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	owned := map[string]*workloadv1.KubernetesApplicationResource{}
	for i := range list.Items {
		if ref := metav1.GetControllerOf(&list.Items[i]); ref != nil && ref.UID == app.UID {
			owned[list.Items[i].Name] = &list.Items[i]
		}
	}
	return owned, nil
}

// sync creates or updates one resource per template; it never adopts a resource that
// another controller (or nobody) controls.
func (r *ApplicationReconciler) sync(ctx context.Context, app *workloadv1.KubernetesApplication, owned map[string]*workloadv1.KubernetesApplicationResource) error {
	for _, t := range app.Spec.ResourceTemplates {
		want := desiredResource(app, t)
		if err := controllerutil.SetControllerReference(app, want, r.client.Scheme()); err != nil {
			return fmt.Errorf("set controller reference: %w", err)
		}
		have, ok := owned[t.Metadata.Name]
		if !ok {
			if err := r.client.Create(ctx, want); err != nil {
				return r.writeError(t.Metadata.Name, err)
			}
			owned[want.Name] = want
			continue
		}
		if same(have, want) {
			continue
		}
		if moved(have, want) {
			if err := r.retarget(ctx, have); err != nil {
				return err
			}
			continue
		}
		have.Labels, have.Annotations, have.Spec = want.Labels, want.Annotations, want.Spec
		if err := r.client.Update(ctx, have); err != nil {
			return r.writeError(t.Metadata.Name, err)
		}
	}
	return nil
}

// moved reports whether the application was placed again since have was made: its
// target (immutable once set) is not the application's cluster any more.
func moved(have, want *workloadv1.KubernetesApplicationResource) bool {
	return have.Spec.TargetRef != nil && want.Spec.TargetRef != nil && *have.Spec.TargetRef != *want.Spec.TargetRef
}

// retarget deletes a resource made for the application's previous cluster, so that it is
// made again for the new one once it is gone. The scheduler moves only applications that
// submitted nothing; a resource that did submit something is never moved away from it.
func (r *ApplicationReconciler) retarget(ctx context.Context, have *workloadv1.KubernetesApplicationResource) error {
	if have.Status.ClusterRef != nil {
		return resource.UserErrorf("ResourceSubmitted", "KubernetesApplicationResource %s was submitted to %s %s and stays there; delete it to submit it to the application's new cluster",
			have.Name, have.Status.ClusterRef.Kind, have.Status.ClusterRef.Name)
	}
	if !have.DeletionTimestamp.IsZero() {
		return nil
	}
	if err := client.IgnoreNotFound(r.client.Delete(ctx, have)); err != nil {
		return fmt.Errorf("delete resource %s: %w", have.Name, err)
	}
	return nil
}

// prune deletes owned resources whose template is gone; it returns those that remain.
func (r *ApplicationReconciler) prune(ctx context.Context, app *workloadv1.KubernetesApplication, owned map[string]*workloadv1.KubernetesApplicationResource) (map[string]*workloadv1.KubernetesApplicationResource, error) {
	keep := map[string]bool{}
	for _, t := range app.Spec.ResourceTemplates {
		keep[t.Metadata.Name] = true
	}
	for name, res := range owned {
		if keep[name] {
			continue
		}
		if err := client.IgnoreNotFound(r.client.Delete(ctx, res)); err != nil {
			return owned, fmt.Errorf("delete resource %s: %w", name, err)
		}
		delete(owned, name)
	}
	return owned, nil
}

// delete deletes every owned resource and waits until their finalizers cleaned the
// remote cluster (there is no garbage collector to rely on).
func (r *ApplicationReconciler) delete(ctx context.Context, app *workloadv1.KubernetesApplication) error {
	owned, err := r.owned(ctx, app)
	if err != nil {
		return err
	}
	for name, res := range owned {
		if res.DeletionTimestamp.IsZero() {
			if err := client.IgnoreNotFound(r.client.Delete(ctx, res)); err != nil {
				return fmt.Errorf("delete resource %s: %w", name, err)
			}
		}
	}
	if len(owned) > 0 {
		return resource.Waitf("DeletingResources", "waiting for %d resources to be removed from the cluster", len(owned))
	}
	return resource.RemoveFinalizer(ctx, r.client, app)
}

// writeError explains a refused create or update of a resource.
func (r *ApplicationReconciler) writeError(name string, err error) error {
	switch {
	case apierrors.IsAlreadyExists(err):
		return resource.UserErrorf("ResourceConflict", "KubernetesApplicationResource %s exists and is not controlled by this application; it is never adopted: rename the template or delete it", name)
	case apierrors.IsInvalid(err):
		return resource.UserErrorf("InvalidTemplate", "resource template %s was refused: %v", name, err)
	}
	return fmt.Errorf("write resource %s: %w", name, err)
}

// desiredResource is the resource template t renders for app.
func desiredResource(app *workloadv1.KubernetesApplication, t workloadv1.KubernetesApplicationResourceTemplate) *workloadv1.KubernetesApplicationResource {
	res := &workloadv1.KubernetesApplicationResource{ObjectMeta: metav1.ObjectMeta{
		Namespace: app.Namespace, Name: t.Metadata.Name, Labels: t.Metadata.Labels, Annotations: t.Metadata.Annotations,
	}}
	t.Spec.DeepCopyInto(&res.Spec)
	res.Spec.TargetRef = app.Status.ClusterRef.DeepCopy()
	return res
}

// same reports whether have already carries want's labels, annotations and spec.
func same(have, want *workloadv1.KubernetesApplicationResource) bool {
	type view struct {
		L map[string]string `json:",omitempty"` // the API server keeps no empty map
		A map[string]string `json:",omitempty"`
		S workloadv1.KubernetesApplicationResourceSpec
	}
	return reflect.DeepEqual(normalize(view{have.Labels, have.Annotations, have.Spec}), normalize(view{want.Labels, want.Annotations, want.Spec}))
}

// normalize turns v into plain JSON values, so that key order and empty maps do not count.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return err.Error()
	}
	return out
}
