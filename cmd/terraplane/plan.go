package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

func planCommand() *cobra.Command {
	cmd := group(&cobra.Command{
		Use:     "plan",
		Short:   "Read the Terraform plans of managed resources",
		Example: "  terraplane plan show s3bucket/bucket-6f1c",
	})
	var ns nsFlags
	var kube kubeFlags
	show := &cobra.Command{
		Use:   "show KIND/NAME",
		Short: "Print the pending (or last) plan of a managed resource, as Terraform shows it",
		Long: `Print the plan of a managed resource: the one awaiting approval or refused, or else the
last one applied. Sensitive values are masked as "(sensitive value)". -o json or -o yaml
gives the plan's summary, its state and its text as data.

The resource is looked for in the admin namespace (terraplane-system, or
--admin-namespace) unless -n names another.`,
		Example: `  terraplane plan show s3bucket/bucket-6f1c
  terraplane plan show module.terraform.terraplane.io/network -n platform -o json`,
		Args: refArgs,
	}
	out := bindOutput(show, "", "json", "yaml")
	show.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := ctrl.SetupSignalHandler()
		s, mg, err := getManaged(ctx, cmd, &kube, &ns, args)
		if err != nil {
			return err
		}
		if out.data() {
			v, err := readPlan(ctx, s.client, mg)
			if err != nil {
				return err
			}
			return out.print(cmd.OutOrStdout(), v)
		}
		return printPlan(ctx, cmd.OutOrStdout(), s.client, mg)
	}
	ns.bind(show.Flags())
	kube.bind(show.Flags())
	cmd.AddCommand(show)
	return cmd
}

func approveCommand() *cobra.Command {
	var ns nsFlags
	var id string
	var yes, wait bool
	var kube kubeFlags
	cmd := &cobra.Command{
		Use:   "approve KIND/NAME",
		Short: "Approve the plan a managed resource holds, after printing it",
		Long: `Approve the plan a managed resource holds (approval: Manual, or a destructive change
refused by destructiveChanges: Refuse): print it, ask for confirmation, and set
spec.approvedPlan to its id. The controller then applies exactly that plan. If the plan
changed in the meantime, nothing is applied and the new plan waits for approval.

The resource is looked for in the admin namespace (terraplane-system, or
--admin-namespace) unless -n names another. With -o json or -o yaml the plan and the
question go to stderr, and stdout gets what was approved (and applied, with --wait).`,
		Example: `  terraplane approve module/network -n platform
  terraplane approve s3bucket/bucket-6f1c --plan 3f9a6c1e2b7d4a50 --yes --wait -o json`,
		Args: refArgs,
	}
	out := bindOutput(cmd, "", "json", "yaml")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := ctrl.SetupSignalHandler()
		return approve(ctx, cmd, &kube, &ns, args, approveOptions{id: id, yes: yes, wait: wait, out: out})
	}
	ns.bind(cmd.Flags())
	cmd.Flags().StringVar(&id, "plan", "", "approve only if the pending plan has this id")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the plan is applied")
	kube.bind(cmd.Flags())
	return cmd
}

// approveOptions are approve's flags.
type approveOptions struct {
	id        string
	yes, wait bool
	out       *output
}

// approval is what approve -o json prints.
type approval struct {
	APIVersion   string `json:"apiVersion"`
	Kind         string `json:"kind"`
	Namespace    string `json:"namespace"`
	Name         string `json:"name"`
	ApprovedPlan string `json:"approvedPlan"`
	// Applied is set with --wait, once the plan is applied.
	Applied *common.ApplySummary `json:"applied,omitempty"`
}

func approve(ctx context.Context, cmd *cobra.Command, kube *kubeFlags, ns *nsFlags, args []string, o approveOptions) error {
	s, mg, err := getManaged(ctx, cmd, kube, ns, args)
	if err != nil {
		return err
	}
	gvk := mg.GetObjectKind().GroupVersionKind()
	c, ref := s.client, gvk.Kind+"/"+mg.GetName()
	out := cmd.OutOrStdout()
	if o.out.data() {
		out = cmd.ErrOrStderr() // the data alone goes to stdout
	}
	pending := pendingPlanOf(mg)
	if pending == nil {
		return fmt.Errorf("%s holds no plan: nothing to approve", ref)
	}
	if synced := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeSynced); synced == nil || synced.Status != "False" {
		return fmt.Errorf("%s leaves plan %s unapplied because its managementPolicies do not include Update: approving cannot apply it", ref, pending.ID)
	}
	if o.id != "" && o.id != pending.ID {
		return fmt.Errorf("the pending plan of %s is %s, not %s: nothing was approved", ref, pending.ID, o.id)
	}
	if err := printPlan(ctx, out, c, mg); err != nil {
		return err
	}
	if !o.yes && !confirm(cmd.InOrStdin(), out, fmt.Sprintf("Apply plan %s to %s? [y/N] ", pending.ID, ref)) {
		return fmt.Errorf("not approved")
	}
	patch := fmt.Sprintf(`{"spec":{"approvedPlan":%q}}`, pending.ID)
	if err := c.Patch(ctx, mg, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("approve %s: %w", ref, err)
	}
	fmt.Fprintf(out, "approved plan %s of %s\n", pending.ID, ref)
	result := approval{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
		Namespace: mg.GetNamespace(), Name: mg.GetName(), ApprovedPlan: pending.ID}
	if o.wait {
		if err := waitApplied(ctx, out, c, mg, pending.ID); err != nil {
			return err
		}
		result.Applied = mg.GetManagedStatus().Terraform.LastApply
	}
	if o.out.data() {
		return o.out.print(cmd.OutOrStdout(), result)
	}
	return nil
}

// waitApplied waits until mg's last apply is plan id, or its Synced condition says why not.
func waitApplied(ctx context.Context, out io.Writer, c client.Client, mg resource.Managed, id string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(mg), mg); err != nil {
			return err
		}
		tf := mg.GetManagedStatus().Terraform
		if tf.LastApply != nil && tf.LastApply.ID == id {
			fmt.Fprintf(out, "applied plan %s (+%d ~%d -%d -/+%d)\n", id, tf.LastApply.Add, tf.LastApply.Change, tf.LastApply.Destroy, tf.LastApply.Replace)
			return nil
		}
		if err := notApplied(mg, id); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("plan %s was not applied: %w", id, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// notApplied says why plan id will not be applied, once mg's Synced condition speaks for
// its current generation and is False without id pending: the apply failed, or the plan
// went stale and a new one holds (its message may name id as the older approval).
func notApplied(mg resource.Managed, id string) error {
	synced := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeSynced)
	if synced == nil || synced.Status != "False" || synced.ObservedGeneration != mg.GetGeneration() {
		return nil
	}
	if pending := pendingPlanOf(mg); pending != nil && pending.ID == id {
		return nil
	}
	return fmt.Errorf("plan %s was not applied: %s: %s", id, synced.Reason, synced.Message)
}

// planView is a managed resource's pending or last plan, as plan show -o json prints it.
type planView struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	// Plan is the plan's summary; nil when the resource has made no plan with changes.
	Plan *common.PlanSummary `json:"plan,omitempty"`
	// Pending says change control holds the plan unapplied.
	Pending bool `json:"pending"`
	// State says where the plan stands: "pending: <reason>", "applied <time>", "not applied".
	State string `json:"state,omitempty"`
	// Text is the plan as Terraform shows it, sensitive values masked; empty when the
	// resource was made with one combined plan-and-apply (then plan.changes lists it).
	Text string `json:"text,omitempty"`
}

// readPlan reads mg's pending or last plan: its summary from status, its text from its
// Plan object (or, from older controllers, the plan Secret).
func readPlan(ctx context.Context, c client.Client, mg resource.Managed) (*planView, error) {
	gvk := mg.GetObjectKind().GroupVersionKind()
	v := &planView{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: mg.GetNamespace(), Name: mg.GetName()}
	tf := mg.GetManagedStatus().Terraform
	if tf.Plan == nil {
		return v, nil
	}
	v.Plan, v.State = tf.Plan, "applied "+formatTime(tf.LastApply)
	if pendingPlanOf(mg) != nil {
		v.Pending = true
		synced := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeSynced)
		v.State = "pending"
		if synced != nil && synced.Status == "False" {
			v.State = "pending: " + synced.Reason
		} else if meta.IsStatusConditionTrue(mg.GetManagedStatus().Conditions, common.TypeDrifted) {
			v.State = "pending: drift not corrected (managementPolicies)"
		}
	} else if tf.LastApply == nil || tf.LastApply.ID != tf.Plan.ID {
		v.State = "not applied"
	}
	text, err := planText(ctx, c, mg, tf.Plan.ID)
	if err != nil {
		return nil, err
	}
	v.Text = text
	return v, nil
}

// printPlan prints mg's pending or last plan: its summary from status, then its text.
func printPlan(ctx context.Context, out io.Writer, c client.Client, mg resource.Managed) error {
	v, err := readPlan(ctx, c, mg)
	if err != nil {
		return err
	}
	if now := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeReconciling); now != nil &&
		now.Status == metav1.ConditionTrue && now.Reason == common.ReasonTerraformRunning {
		fmt.Fprintf(out, "Now: %s\n", now.Message)
	}
	p := v.Plan
	if p == nil {
		fmt.Fprintf(out, "%s/%s has no plan with changes yet\n", mg.GetNamespace(), mg.GetName())
		return nil
	}
	fmt.Fprintf(out, "Plan %s (%s, made %s; %s)\n", p.ID, p.Reason, p.CreatedAt.UTC().Format(time.RFC3339), v.State)
	fmt.Fprintf(out, "  +%d to add, ~%d to change, -%d to destroy, -/+%d to replace", p.Add, p.Change, p.Destroy, p.Replace)
	if p.Import > 0 {
		fmt.Fprintf(out, ", %d to import", p.Import)
	}
	fmt.Fprintln(out)
	printPolicies(out, p.Policies)
	if v.Text != "" {
		fmt.Fprintf(out, "\n%s", v.Text)
		return nil
	}
	fmt.Fprintln(out, "\n(created with one combined plan-and-apply: no saved plan to show; the changes were)")
	for _, ch := range p.Changes {
		fmt.Fprintf(out, "  %s: %s\n", ch.Address, strings.Join(ch.Actions, ", "))
	}
	return nil
}

// planText reads the text of mg's plan id from its Plan, which reviewers may read; else
// from the plan Secret, where controllers before Plans kept it (an approver may not
// read Secrets: that is no error).
func planText(ctx context.Context, c client.Client, mg resource.Managed, id string) (string, error) {
	p := &terraformv1.Plan{}
	err := c.Get(ctx, client.ObjectKey{Namespace: mg.GetNamespace(), Name: resource.PlanName(mg)}, p)
	if err == nil && p.Summary.ID == id {
		return p.Text, nil
	}
	if err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
		return "", fmt.Errorf("read plan: %w", err)
	}
	sec := &corev1.Secret{}
	err = c.Get(ctx, client.ObjectKey{Namespace: mg.GetNamespace(), Name: resource.PlanSecretName(mg)}, sec)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
		return "", fmt.Errorf("read plan: %w", err)
	}
	return string(sec.Data[resource.PlanTextKey]), nil
}

// pendingPlanOf is the plan mg holds unapplied, if any.
func pendingPlanOf(mg resource.Managed) *common.PlanSummary {
	return mg.GetManagedStatus().PendingPlan()
}

func formatTime(a *common.ApplySummary) string {
	if a == nil {
		return ""
	}
	return a.Time.UTC().Format(time.RFC3339)
}

// confirm asks a yes/no question on in.
func confirm(in io.Reader, out io.Writer, question string) bool {
	fmt.Fprint(out, question)
	answer, _ := bufio.NewReader(in).ReadString('\n')
	answer = strings.ToLower(strings.TrimSpace(answer))
	return answer == "y" || answer == "yes"
}

// getManaged connects and reads the Terraform managed resource args name (KIND/NAME),
// in -n or the admin namespace.
func getManaged(ctx context.Context, cmd *cobra.Command, kube *kubeFlags, ns *nsFlags, args []string) (*session, resource.Managed, error) {
	s, err := kube.connect(ns, cmd.ErrOrStderr())
	if err != nil {
		return nil, nil, err
	}
	t, err := s.resolve(args)
	if err != nil {
		return nil, nil, err
	}
	mg, err := s.managed(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	return s, mg, nil
}

// printPolicies prints what the plan policies said about a plan, one rule a line.
func printPolicies(out io.Writer, results []common.PolicyResult) {
	if len(results) == 0 {
		return
	}
	fmt.Fprintln(out, "  policies:")
	for _, r := range results {
		line := fmt.Sprintf("    %-16s %s/%s", r.Result, r.Policy, r.Rule)
		if r.Message != "" {
			line += ": " + r.Message
		}
		fmt.Fprintln(out, line)
	}
}
