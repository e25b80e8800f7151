package trace

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// Node is one object of a trace and what depends on it.
type Node struct {
	// APIVersion of the object.
	APIVersion string `json:"apiVersion,omitempty"`
	// Kind of the object.
	Kind string `json:"kind"`
	// Namespace of the object.
	Namespace string `json:"namespace,omitempty"`
	// Name of the object.
	Name string `json:"name"`
	// Ready is the status of the Ready condition (True, False, Unknown), empty without one.
	Ready string `json:"ready,omitempty"`
	// Synced is the status of the Synced condition, empty without one.
	Synced string `json:"synced,omitempty"`
	// Reason says where the object stands: the reason of its failing condition, else of
	// Ready, else its phase.
	Reason string `json:"reason,omitempty"`
	// Message goes with Reason.
	Message string `json:"message,omitempty"`
	// Created is when the object (or plan) was made.
	Created *metav1.Time `json:"created,omitempty"`
	// Error says why the object could not be read: Forbidden, NotFound, or Error; Message
	// says more. Nothing below it is known.
	Error string `json:"error,omitempty"`
	// Derived says the node stands for no API object that kubectl get finds (Kind and
	// Name then name what it stands for); otherwise APIVersion, Kind, Namespace and Name
	// are the object's.
	Derived bool `json:"derived,omitempty"`
	// Plan is the plan a Plan node stands for.
	Plan *Plan `json:"plan,omitempty"`
	// Children are what the object depends on.
	Children []*Node `json:"children,omitempty"`
	// Display is how the node is named in a table (Kind/name, qualified with the group
	// when several groups have the kind).
	Display string `json:"-"`
}

// Plan is a plan a managed resource holds and has not applied.
type Plan struct {
	// ID is the plan's id, the value spec.approvedPlan takes.
	ID string `json:"id"`
	// Reason the plan was made: Create, Update or Drift.
	Reason common.PlanReason `json:"reason"`
	// Add, Change, Destroy and Replace count what it does.
	Add     int `json:"add"`
	Change  int `json:"change"`
	Destroy int `json:"destroy"`
	Replace int `json:"replace"`
	// Pending says that change control holds it: awaiting approval, refused, or drift
	// the managementPolicies leave alone. Otherwise it is about to be applied.
	Pending bool `json:"pending"`
	// AwaitingApproval says `terraplane approve` (spec.approvedPlan) lets it through.
	AwaitingApproval bool `json:"awaitingApproval"`
}

// Counts is the plan's changes as Terraform's summary puts them.
func (p *Plan) Counts() string {
	return fmt.Sprintf("+%d ~%d -%d -/+%d", p.Add, p.Change, p.Destroy, p.Replace)
}

// Status is what the STATUS column shows: the error, else the reason.
func (n *Node) Status() string {
	if n.Error != "" {
		return n.Error
	}
	return n.Reason
}

// Healthy reports whether the node is readable and not failing.
func (n *Node) Healthy() bool {
	return n.Error == "" && n.Ready != "False" && n.Synced != "False" && (n.Plan == nil || !n.Plan.Pending)
}

// objectNode is the node of obj with its conditions summarised.
func objectNode(obj *unstructured.Unstructured) *Node {
	n := &Node{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if ts := obj.GetCreationTimestamp(); !ts.IsZero() {
		n.Created = &ts
	}
	conds := conditions(obj)
	ready, synced := meta.FindStatusCondition(conds, common.TypeReady), meta.FindStatusCondition(conds, common.TypeSynced)
	if ready != nil {
		n.Ready = string(ready.Status)
	}
	if synced != nil {
		n.Synced = string(synced.Status)
	}
	if c := telling(conds, ready, synced); c != nil {
		n.Reason, n.Message = c.Reason, c.Message
		return n
	}
	for _, phase := range [][]string{{"status", "bindingPhase"}, {"status", "state"}} {
		if s, _, _ := unstructured.NestedString(obj.Object, phase...); s != "" {
			n.Reason = s
			break
		}
	}
	return n
}

// telling is the condition that best says where an object stands: Synced when not
// True, Reconciling when it says what terraform is doing now, Ready when not True,
// Stalled when True, else Ready, else Synced.
func telling(conds []metav1.Condition, ready, synced *metav1.Condition) *metav1.Condition {
	running := meta.FindStatusCondition(conds, common.TypeReconciling)
	switch {
	case synced != nil && synced.Status == metav1.ConditionFalse:
		return synced
	case running != nil && running.Status == metav1.ConditionTrue && running.Reason == common.ReasonTerraformRunning:
		return running
	case ready != nil && ready.Status != metav1.ConditionTrue:
		return ready
	}
	if stalled := meta.FindStatusCondition(conds, common.TypeStalled); stalled != nil && stalled.Status == metav1.ConditionTrue {
		return stalled
	}
	if ready != nil {
		return ready
	}
	return synced
}

// conditions are obj's status.conditions; ones that do not parse are left out.
func conditions(obj *unstructured.Unstructured) []metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	var out []metav1.Condition
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		var c metav1.Condition
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
			out = append(out, c)
		}
	}
	return out
}

// errorNode stands for an object that could not be read.
func errorNode(apiVersion, kind, namespace, name string, err error) *Node {
	n := &Node{APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name, Message: err.Error()}
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		n.Error = "Forbidden"
	case apierrors.IsNotFound(err):
		n.Error = "NotFound"
	case meta.IsNoMatchError(err):
		n.Error = "UnknownKind"
	default:
		n.Error = "Error"
	}
	return n
}
