package claimdefinition

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	"terraplane.io/terraplane/internal/claimcrd"
)

// Labels that aggregate a defined kind's ClusterRoles into the chart's roles
// (charts/terraplane/templates/clusterrole-tenancy.yaml).
const (
	// AggregateToClaimer joins terraplane-claimer (and so edit): claims written, classes read.
	AggregateToClaimer = "terraplane.io/aggregate-to-claimer"
	// AggregateToViewer joins terraplane-viewer (and so view): both read.
	AggregateToViewer = "terraplane.io/aggregate-to-viewer"
	// AggregateToAdmin joins terraplane-admin: both written.
	AggregateToAdmin = "terraplane.io/aggregate-to-admin"
	// AggregateToManager joins the controller's <release>-manager-defined role: what the
	// claim reconciler needs of both.
	AggregateToManager = "terraplane.io/aggregate-to-manager"
)

var (
	readVerbs  = []string{"get", "list", "watch"}
	writeVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
)

// KindRoles are the ClusterRoles that give the roles of the chart a defined kind's claims
// (claim CRD claim) and portable classes (class CRD class): one per role, named after
// the definition and labelled to aggregate into it.
func KindRoles(def *apiextv1.ClaimDefinition, claim, class *apiextensionsv1.CustomResourceDefinition) []*rbacv1.ClusterRole {
	group := []string{def.Spec.Group}
	claims, classes := claim.Spec.Names.Plural, class.Spec.Names.Plural
	role := func(suffix, label string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "terraplane:" + def.Name + ":" + suffix,
			Labels: map[string]string{label: "true", claimcrd.DefinitionLabel: def.Name}}, Rules: rules}
	}
	return []*rbacv1.ClusterRole{
		role("claimer", AggregateToClaimer,
			rbacv1.PolicyRule{APIGroups: group, Resources: []string{claims}, Verbs: writeVerbs},
			rbacv1.PolicyRule{APIGroups: group, Resources: []string{classes}, Verbs: readVerbs}),
		role("viewer", AggregateToViewer, rbacv1.PolicyRule{APIGroups: group, Resources: []string{claims, classes}, Verbs: readVerbs}),
		role("admin", AggregateToAdmin, rbacv1.PolicyRule{APIGroups: group, Resources: []string{claims, classes}, Verbs: writeVerbs}),
		role("manager", AggregateToManager,
			// Claims are created and deleted too: a ResourcePool's members.
			rbacv1.PolicyRule{APIGroups: group, Resources: []string{claims}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			rbacv1.PolicyRule{APIGroups: group, Resources: []string{classes}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
			rbacv1.PolicyRule{APIGroups: group, Resources: []string{claims + "/status", classes + "/status"}, Verbs: []string{"get", "update", "patch"}}),
	}
}

// roles creates or updates the kind's ClusterRoles, owned by the definition so that they
// go with it.
func (r *Reconciler) roles(ctx context.Context, c *run) error {
	for _, want := range KindRoles(c.def, c.claim, c.class) {
		have := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: want.Name}}
		_, err := controllerutil.CreateOrUpdate(ctx, r.client, have, func() error {
			have.Labels, have.Rules = want.Labels, want.Rules
			return controllerutil.SetControllerReference(c.def, have, r.client.Scheme())
		})
		if err != nil {
			return fmt.Errorf("apply ClusterRole %s: %w", want.Name, err)
		}
	}
	return nil
}
