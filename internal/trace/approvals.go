package trace

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Approval is a plan a managed resource holds: awaiting approval, refused, or drift its
// managementPolicies leave alone.
type Approval struct {
	// APIVersion, Kind, Namespace and Name are the managed resource's.
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	// Claim is the claim the resource serves (kind/namespace/name); empty when none.
	Claim string `json:"claim,omitempty"`
	// PlanID is the plan's id, the value spec.approvedPlan takes.
	PlanID string `json:"planID"`
	// Plan is its reason (Create, Update, Drift) and counts.
	Plan Plan `json:"plan"`
	// Reason holds the plan: the Synced reason (AwaitingApproval, ProviderUpgrade,
	// DestructiveChangeRefused, AdoptionRefused, CreateNotAllowed) or DriftNotCorrected.
	Reason string `json:"reason"`
	// Message is the Synced condition's message.
	Message string `json:"message,omitempty"`
	// Created is when the plan was made.
	Created *metav1.Time `json:"created,omitempty"`
}

// ApprovalList is what `get approvals` finds, and where it could not look.
type ApprovalList struct {
	// Items are the pending plans.
	Items []Approval `json:"items"`
	// Namespaces, when set, are the only namespaces looked in for some kind, because the
	// caller may not list it in all namespaces.
	Namespaces []string `json:"namespaces,omitempty"`
	// Unreadable are the namespaces where the caller may not list some managed kind.
	Unreadable []string `json:"unreadable,omitempty"`
}

// Scope is where ListApprovals looks: in one namespace, or in all the caller may list.
type Scope struct {
	// Namespace, when set, is the only namespace looked in.
	Namespace string
	// Fallback are the namespaces looked in, one by one, when a kind may not be listed
	// in all namespaces (the admin namespace and the context's).
	Fallback []string
}

// ListApprovals lists every managed resource of the kinds whose plan is pending, in
// scope. A list the caller may not make is noted, not an error, unless nothing at all
// could be listed.
func ListApprovals(ctx context.Context, r client.Reader, kinds []schema.GroupVersionKind, scope Scope) (*ApprovalList, error) {
	out := &ApprovalList{Items: []Approval{}}
	listed := 0
	for _, gvk := range kinds {
		namespaces := []string{scope.Namespace}
		for i := 0; i < len(namespaces); i++ {
			ns := namespaces[i]
			items, err := list(ctx, r, gvk, ns)
			switch {
			case apierrors.IsForbidden(err) && ns == "" && len(scope.Fallback) > 0:
				namespaces = append(namespaces, scope.Fallback...)
				out.Namespaces = scope.Fallback
				continue
			case apierrors.IsForbidden(err):
				if !slices.Contains(out.Unreadable, orAll(ns)) {
					out.Unreadable = append(out.Unreadable, orAll(ns))
				}
				continue
			case err != nil:
				return nil, fmt.Errorf("list %s in %s: %w", gvk.Kind, orAll(ns), err)
			}
			listed++
			out.Items = append(out.Items, pending(items)...)
		}
	}
	if listed == 0 && len(kinds) > 0 {
		return nil, fmt.Errorf("you may not list managed resources in %s: name a namespace you may read with -n", strings.Join(out.Unreadable, ", "))
	}
	sort.Slice(out.Items, func(i, j int) bool {
		a, b := out.Items[i], out.Items[j]
		return a.Namespace+"/"+a.Kind+"/"+a.Name < b.Namespace+"/"+b.Kind+"/"+b.Name
	})
	return out, nil
}

func orAll(ns string) string {
	if ns == "" {
		return "all namespaces"
	}
	return ns
}

func list(ctx context.Context, r client.Reader, gvk schema.GroupVersionKind, namespace string) ([]unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	var opts []client.ListOption
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := r.List(ctx, l, opts...); err != nil {
		return nil, err
	}
	for i := range l.Items {
		l.Items[i].SetGroupVersionKind(gvk)
	}
	return l.Items, nil
}

// pending are the approvals among items: the resources whose plan node is pending.
func pending(items []unstructured.Unstructured) []Approval {
	var out []Approval
	for i := range items {
		mg := &items[i]
		n := planNode(mg)
		if n == nil || !n.Plan.Pending {
			continue
		}
		st, _ := managedStatus(mg)
		a := Approval{APIVersion: mg.GetAPIVersion(), Kind: mg.GetKind(), Namespace: mg.GetNamespace(), Name: mg.GetName(),
			PlanID: n.Plan.ID, Plan: *n.Plan, Reason: n.Reason, Created: n.Created, Claim: claimOf(mg)}
		for _, c := range st.Conditions {
			if c.Type == "Synced" {
				a.Message = c.Message
			}
		}
		out = append(out, a)
	}
	return out
}

// claimOf names the claim mg serves, kind/namespace/name, from its spec.claimRef; ""
// when it serves none.
func claimOf(mg *unstructured.Unstructured) string {
	ref, _, _ := unstructured.NestedStringMap(mg.Object, "spec", "claimRef")
	if ref["name"] == "" {
		return ""
	}
	return strings.ToLower(ref["kind"]) + "/" + ref["namespace"] + "/" + ref["name"]
}

// PrintApprovals writes the list as a table (wide adds messages), or as data.
func PrintApprovals(w io.Writer, l *ApprovalList, format string, now time.Time) error {
	if format == "json" || format == "yaml" {
		return PrintData(w, l, format)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "NAMESPACE\tRESOURCE\tCLAIM\tPLAN\tREASON\tCHANGES\tAGE"
	if format == "wide" {
		header += "\tMESSAGE"
	}
	fmt.Fprintln(tw, header)
	for _, a := range l.Items {
		line := fmt.Sprintf("%s\t%s/%s\t%s\t%s\t%s\t%s\t%s", a.Namespace, a.Kind, a.Name, dash(a.Claim), a.PlanID, a.Reason, a.Plan.Counts(), Age(a.Created, now))
		if format == "wide" {
			line += "\t" + dash(oneLine(a.Message))
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}
