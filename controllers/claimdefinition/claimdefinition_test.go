package claimdefinition

import (
	"context"
	"sort"
	"testing"
	"time"

	common "terraplane.io/terraplane/apis/common/v1alpha1"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/claimcrd"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/resource"
)

const (
	sizeSchema = `{"type": "object", "properties": {"size": {"type": "integer"}, "cidr": {"type": "string"}}}`
	cidrSchema = `{"type": "object", "properties": {"cidr": {"type": "string"}}}`
	vpcTF      = `variable "cidr" {
  type = string
  validation {
    condition     = can(tonumber(var.cidr))
    error_message = "numeric"
  }
}
variable "zones" {
  type    = number
  default = 2
}
`
)

// outcome is what reconciles left: the conditions, what is served, the CRDs and the requeue.
type outcome struct {
	Conditions [2]string
	// Progress is how kstatus reads it: Stalled/<reason>, Reconciling, or Applied
	// (observedGeneration caught up, neither condition).
	Progress string
	Served   []string
	CRDs     []string // that exist, owned by the definition
	Requeue  time.Duration
	Err      bool
}

func (h *harness) outcome(requeue time.Duration, err error) outcome {
	o := outcome{Served: h.server.served, Requeue: requeue, Err: err != nil}
	if d := h.def(); d != nil {
		o.Conditions = conditions(d)
		switch conds := d.Status.Conditions; {
		case meta.IsStatusConditionTrue(conds, common.TypeStalled):
			o.Progress = "Stalled/" + meta.FindStatusCondition(conds, common.TypeStalled).Reason
		case meta.IsStatusConditionTrue(conds, common.TypeReconciling):
			o.Progress = "Reconciling"
		case d.Status.ObservedGeneration == d.Generation:
			o.Progress = "Applied"
		}
	}
	for _, name := range []string{claimCRD, classCRD} {
		if c := h.crd(name); c != nil && metav1IsControlledBy(c, &apiextv1.ClaimDefinition{ObjectMeta: metav1.ObjectMeta{UID: "def-uid"}}) &&
			c.Labels[claimcrd.DefinitionLabel] == defName {
			o.CRDs = append(o.CRDs, name)
		}
	}
	return o
}

// TestReconcile: what a reconcile of a definition applies and serves, and its status:
// Reconciling until its kinds are served, Stalled when someone must act.
func TestReconcile(t *testing.T) {
	both := []string{claimCRD, classCRD}
	served := []string{"Network/NetworkClass"}
	cases := map[string]struct {
		objs      []client.Object
		establish bool // the API server serves the CRDs the first reconcile applied
		setup     func(*harness)
		want      outcome
	}{
		"the CRDs are applied, and waited for": {
			objs: []client.Object{definition(sizeSchema, "")},
			want: outcome{Conditions: [2]string{"True/WaitingForCRD", "False/WaitingForCRD"}, Progress: "Reconciling", CRDs: both, Requeue: crdPoll},
		},
		"once established, the kind is served": {
			objs: []client.Object{definition(sizeSchema, "")}, establish: true,
			want: outcome{Conditions: [2]string{"True/" + common.ReasonReconcileSuccess, "True/Served"}, Progress: "Applied", CRDs: both, Served: served},
		},
		"a schema generated from a module": {
			objs: append(moduleClass(vpcTF), definition("", "vpc")), establish: true,
			want: outcome{Conditions: [2]string{"True/" + common.ReasonReconcileSuccess, "True/Served"}, Progress: "Applied", CRDs: both, Served: served},
		},
		"no schema at all": {
			objs: []client.Object{definition("", "")},
			want: outcome{Conditions: [2]string{"False/InvalidSchema", "False/InvalidSchema"}, Progress: "Stalled/InvalidSchema", Requeue: userRetry},
		},
		"a schema that is no object": {
			objs: []client.Object{definition(`{"type": "string"}`, "")},
			want: outcome{Conditions: [2]string{"False/InvalidSchema", "False/InvalidSchema"}, Progress: "Stalled/InvalidSchema", Requeue: userRetry},
		},
		"a schema that is no OpenAPI schema": {
			objs: []client.Object{definition(`{"type": 3}`, "")},
			want: outcome{Conditions: [2]string{"False/InvalidSchema", "False/InvalidSchema"}, Progress: "Stalled/InvalidSchema", Requeue: userRetry},
		},
		"a module class that does not exist": {
			objs: []client.Object{definition("", "vpc")},
			want: outcome{Conditions: [2]string{"False/ModuleClassNotFound", "False/ModuleClassNotFound"}, Progress: "Stalled/ModuleClassNotFound", Requeue: userRetry},
		},
		"a module whose variables make no schema": {
			objs: append(moduleClass(`variable "cidr" { type = string`), definition("", "vpc")),
			want: outcome{Conditions: [2]string{"False/InvalidModule", "False/InvalidModule"}, Progress: "Stalled/InvalidModule", Requeue: userRetry},
		},
		"a CRD of the kind's name that is not the definition's": {
			objs: []client.Object{definition(sizeSchema, ""), foreignCRD()},
			want: outcome{Conditions: [2]string{"False/Conflict", "False/Conflict"}, Progress: "Stalled/Conflict", Requeue: userRetry},
		},
		"a kind served already with another class": {
			objs: []client.Object{definition(sizeSchema, "")}, establish: true,
			setup: func(h *harness) {
				h.reg.AddClaim(kinds.DefinedClaim(networkGVK, classGVK.GroupVersion().WithKind("NetworkTier")))
			},
			want: outcome{Conditions: [2]string{"False/Conflict", "False/Conflict"}, Progress: "Stalled/Conflict", CRDs: both, Requeue: userRetry},
		},
		"the claim reconciler cannot start": {
			objs: []client.Object{definition(sizeSchema, "")}, establish: true,
			setup: func(h *harness) { h.server.err = errServe },
			want:  outcome{Conditions: [2]string{"False/ReconcileError", "False/ReconcileError"}, Progress: "Reconciling", CRDs: both, Err: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, tc.objs...)
			if tc.establish {
				if _, err := h.reconcile(); err != nil {
					t.Fatal(err)
				}
				h.establish()
			}
			if tc.setup != nil {
				tc.setup(h)
			}
			res, err := h.reconcile()
			if diff := cmp.Diff(tc.want, h.outcome(res.RequeueAfter, err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestStatus: a served definition names its CRDs, the module validations its claims'
// schema could not carry, and the generation it observed.
func TestStatus(t *testing.T) {
	h := newHarness(t, append(moduleClass(vpcTF), definition("", "vpc"))...)
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	h.establish()
	if _, err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	d := h.def()
	if diff := cmp.Diff([]any{claimCRD, classCRD, int64(3), "cidr", true}, []any{d.Status.ClaimCRD, d.Status.ClassCRD, d.Status.ObservedGeneration,
		untranslated(d), controllerutil.ContainsFinalizer(d, resource.Finalizer)}); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	params, _ := claimcrd.Parameters(h.crd(claimCRD))
	var props []string
	for p := range params.Properties {
		props = append(props, p)
	}
	sort.Strings(props)
	if diff := cmp.Diff([]any{[]string{"cidr", "zones"}, []string{"cidr"}}, []any{props, params.Required}); diff != "" {
		t.Errorf("parameters from the module's variables (-want +got):\n%s", diff)
	}
}

func untranslated(d *apiextv1.ClaimDefinition) string {
	if len(d.Status.Untranslated) != 1 {
		return ""
	}
	return d.Status.Untranslated[0].Variable
}

// TestBreakingChange: a new schema that would break a claim is refused and the kind keeps
// being served with the CRD as it was; one that breaks no claim is applied.
func TestBreakingChange(t *testing.T) {
	cases := map[string]struct {
		claims  []client.Object
		want    [2]string
		applied bool // the CRD has the new schema
	}{
		"a claim sets the removed field": {
			claims: []client.Object{claim("a", map[string]any{"cidr": "10.0.0.0/16"}), claim("b", map[string]any{"size": int64(3)})},
			want:   [2]string{"False/BreakingChange", "False/BreakingChange"},
		},
		"no claim sets it": {
			claims: []client.Object{claim("a", map[string]any{"cidr": "10.0.0.0/16"})},
			want:   [2]string{"True/" + common.ReasonReconcileSuccess, "True/Served"}, applied: true,
		},
		"no claims": {want: [2]string{"True/" + common.ReasonReconcileSuccess, "True/Served"}, applied: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, append(tc.claims, definition(sizeSchema, ""))...)
			if _, err := h.reconcile(); err != nil {
				t.Fatal(err)
			}
			h.establish()
			d := h.def()
			d.Spec.Schema = &apiextensionsv1.JSON{Raw: []byte(cidrSchema)}
			if err := h.c.Update(context.Background(), d); err != nil {
				t.Fatal(err)
			}
			if _, err := h.reconcile(); err != nil {
				t.Fatal(err)
			}
			params, _ := claimcrd.Parameters(h.crd(claimCRD))
			_, hasSize := params.Properties["size"]
			got := outcome{Conditions: conditions(h.def()), Served: h.server.served}
			want := outcome{Conditions: tc.want, Served: []string{"Network/NetworkClass"}}
			if diff := cmp.Diff(want, got); diff != "" || hasSize == tc.applied {
				t.Errorf("CRD has size: %v, want %v; (-want +got):\n%s", hasSize, !tc.applied, diff)
			}
		})
	}
}

func TestForModuleClass(t *testing.T) {
	inTeam := definition("", "vpc")
	inTeam.Name, inTeam.Spec.FromModule.ModuleClassRef.Namespace = "team", "team-a"
	written := definition(sizeSchema, "")
	written.Name = "written"
	h := newHarness(t, definition("", "vpc"), inTeam, written)
	cases := map[string]struct {
		ns, name string
		want     []reconcile.Request
	}{
		"the default namespace": {"terraplane-system", "vpc", []reconcile.Request{{NamespacedName: client.ObjectKey{Name: defName}}}},
		"a namespace named":     {"team-a", "vpc", []reconcile.Request{{NamespacedName: client.ObjectKey{Name: "team"}}}},
		"another class":         {"terraplane-system", "db", nil},
	}
	for name, tc := range cases {
		mc := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: tc.ns, Name: tc.name}}
		if diff := cmp.Diff(tc.want, h.r.forModuleClass(context.Background(), mc)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}
