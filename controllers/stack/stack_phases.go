package stack

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/stackpkg"
)

// allVerbs are granted on owned and dependsOn CRDs.
var allVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// coreRules are what any controller needs besides its CRDs.
var coreRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "services"}, Verbs: allVerbs},
	{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
	{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: allVerbs},
}

// clusterName names a Stack's cluster-scoped RBAC objects.
func clusterName(s *stacksv1.Stack) string {
	return "stacks.terraplane.io:" + s.Namespace + ":" + s.Name
}

func (r *StackReconciler) meta(s *stacksv1.Stack, name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{stacksv1.LabelStack: s.Name},
		Annotations: map[string]string{stacksv1.AnnotationOwner: "Stack/" + s.Namespace + "/" + s.Name}}
}

// owned lists every object the Stack reconciler may have created for s.
func (r *StackReconciler) owned(s *stacksv1.Stack) []client.Object {
	out := []client.Object{
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: clusterName(s)}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: clusterName(s)}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace}},
	}
	if d := s.Spec.Controller.Deployment; d != nil {
		out = append([]client.Object{&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: s.Namespace}}}, out...)
	}
	return out
}

// serviceAccount is what the controller runs as.
func (r *StackReconciler) serviceAccount(ctx context.Context, s *stacksv1.Stack) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.client, sa, func() error {
		m := r.meta(s, sa.Name, sa.Namespace)
		sa.Labels, sa.Annotations = merge(sa.Labels, m.Labels), merge(sa.Annotations, m.Annotations)
		return controllerutil.SetControllerReference(s, sa, r.client.Scheme())
	})
	s.Status.ServiceAccount = sa.Name
	return err
}

// rbac grants the rules as a ClusterRole (Cluster scope) or a Role in the Stack's
// namespace (Namespaced scope), and removes the other kind.
func (r *StackReconciler) rbac(ctx context.Context, s *stacksv1.Stack) error {
	rules, err := Rules(s.Spec)
	if err != nil {
		return resource.UserErrorf(stacksv1.ReasonInvalidStack, "%v", err)
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: s.Name, Namespace: s.Namespace}}
	var want, stale []client.Object
	if s.Spec.PermissionScope == stacksv1.PermissionScopeCluster {
		role := &rbacv1.ClusterRole{ObjectMeta: r.meta(s, clusterName(s), ""), Rules: rules}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: r.meta(s, clusterName(s), ""), Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}}
		want = []client.Object{role, binding}
		stale = []client.Object{&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace}}, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace}}}
	} else {
		role := &rbacv1.Role{ObjectMeta: r.meta(s, s.Name, s.Namespace), Rules: rules}
		binding := &rbacv1.RoleBinding{ObjectMeta: r.meta(s, s.Name, s.Namespace), Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}}
		if err := controllerutil.SetControllerReference(s, role, r.client.Scheme()); err != nil {
			return err
		}
		if err := controllerutil.SetControllerReference(s, binding, r.client.Scheme()); err != nil {
			return err
		}
		want = []client.Object{role, binding}
		stale = []client.Object{&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: clusterName(s)}}, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: clusterName(s)}}}
	}
	for _, obj := range stale {
		if err := client.IgnoreNotFound(r.client.Delete(ctx, obj)); err != nil {
			return fmt.Errorf("delete %T %s: %w", obj, obj.GetName(), err)
		}
	}
	for _, obj := range want {
		if err := upsert(ctx, r.client, obj); err != nil {
			return err
		}
	}
	return nil
}

// upsert creates obj or overwrites the existing one with it.
func upsert(ctx context.Context, c client.Client, obj client.Object) error {
	have := obj.DeepCopyObject().(client.Object)
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), have)
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("get %T %s: %w", obj, obj.GetName(), err)
	}
	if err != nil {
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
		}
		return nil
	}
	obj.SetResourceVersion(have.GetResourceVersion())
	if err := c.Update(ctx, obj); err != nil {
		return fmt.Errorf("update %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}

// Rules are the permissions of a Stack's controller: all verbs on owned and dependsOn
// CRDs (a * plural grants the whole group) and the core resources a controller needs.
// A CRD in a reserved group (stackpkg.ReservedGroup: Terraplane's or Kubernetes' own)
// is refused, and so grants nothing.
func Rules(spec stacksv1.StackSpec) ([]rbacv1.PolicyRule, error) {
	byGroup := map[string]map[string]bool{}
	for _, crd := range append(append([]string{}, spec.CRDs.Owned...), spec.CRDs.DependsOn...) {
		if err := stackpkg.CheckCRD(crd); err != nil {
			return nil, err
		}
		plural, group, _, err := stackpkg.SplitCRD(crd)
		if err != nil {
			return nil, err
		}
		if byGroup[group] == nil {
			byGroup[group] = map[string]bool{}
		}
		if plural == "*" {
			byGroup[group]["*"] = true
			continue
		}
		byGroup[group][plural], byGroup[group][plural+"/status"], byGroup[group][plural+"/finalizers"] = true, true, true
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	var rules []rbacv1.PolicyRule
	for _, g := range groups {
		res := []string{"*"}
		if !byGroup[g]["*"] {
			res = res[:0]
			for p := range byGroup[g] {
				res = append(res, p)
			}
			sort.Strings(res)
		}
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: res, Verbs: allVerbs})
	}
	return append(rules, coreRules...), nil
}

// deployment runs the controller from install.yaml as the Stack's ServiceAccount, with
// POD_NAME and POD_NAMESPACE set.
func (r *StackReconciler) deployment(ctx context.Context, s *stacksv1.Stack) error {
	spec := s.Spec.Controller.Deployment
	if err := r.pruneDeployments(ctx, s); err != nil || spec == nil {
		return err
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: spec.Name, Namespace: s.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.client, d, func() error {
		m := r.meta(s, d.Name, d.Namespace)
		d.Labels, d.Annotations = merge(d.Labels, m.Labels), merge(d.Annotations, m.Annotations)
		d.Spec = *spec.Spec.DeepCopy()
		pod := &d.Spec.Template.Spec
		pod.ServiceAccountName = s.Name
		for i := range pod.Containers {
			pod.Containers[i].Env = withPodEnv(pod.Containers[i].Env)
		}
		return controllerutil.SetControllerReference(s, d, r.client.Scheme())
	})
	if err != nil {
		return fmt.Errorf("apply deployment %s: %w", d.Name, err)
	}
	return nil
}

// withPodEnv sets POD_NAME and POD_NAMESPACE from the downward API, replacing any given.
func withPodEnv(env []corev1.EnvVar) []corev1.EnvVar {
	out := []corev1.EnvVar{
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}},
	}
	for _, e := range env {
		if e.Name != "POD_NAME" && e.Name != "POD_NAMESPACE" {
			out = append(out, e)
		}
	}
	return out
}

// pruneDeployments deletes the Stack's Deployments other than the one its spec names,
// e.g. after an upgrade renamed or dropped the controller.
func (r *StackReconciler) pruneDeployments(ctx context.Context, s *stacksv1.Stack) error {
	list := &appsv1.DeploymentList{}
	if err := r.client.List(ctx, list, client.InNamespace(s.Namespace), client.MatchingLabels{stacksv1.LabelStack: s.Name}); err != nil {
		return fmt.Errorf("list deployments: %w", err)
	}
	for i := range list.Items {
		d := &list.Items[i]
		if metav1.IsControlledBy(d, s) && (s.Spec.Controller.Deployment == nil || d.Name != s.Spec.Controller.Deployment.Name) {
			if err := client.IgnoreNotFound(r.client.Delete(ctx, d)); err != nil {
				return fmt.Errorf("delete old deployment %s: %w", d.Name, err)
			}
		}
	}
	return nil
}
