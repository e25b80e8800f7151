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
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/resource"
)

func planCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Read the Terraform plans of managed resources",
	}
	var namespace string
	var kube kubeFlags
	show := &cobra.Command{
		Use:   "show KIND/NAME",
		Short: "Print the pending (or last) plan of a managed resource, as Terraform shows it",
		Long: `Print the plan of a managed resource: the one awaiting approval or refused, or else the
last one applied. Sensitive values are masked as "(sensitive value)".`,
		Example: `  terraplane plan show s3bucket/bucket-6f1c -n terraplane-system
  terraplane plan show module.terraform.terraplane.io/network -n platform`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := ctrl.SetupSignalHandler()
			c, mg, err := getManaged(ctx, &kube, args[0], namespace)
			if err != nil {
				return err
			}
			return printPlan(ctx, cmd.OutOrStdout(), c, mg)
		},
	}
	show.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace of the resource")
	kube.bind(show.Flags())
	cmd.AddCommand(show)
	return cmd
}

func approveCommand() *cobra.Command {
	var namespace, id string
	var yes, wait bool
	var kube kubeFlags
	cmd := &cobra.Command{
		Use:   "approve KIND/NAME",
		Short: "Approve the plan a managed resource holds, after printing it",
		Long: `Approve the plan a managed resource holds (approval: Manual, or a destructive change
refused by destructiveChanges: Refuse): print it, ask for confirmation, and set
spec.approvedPlan to its id. The controller then applies exactly that plan. If the plan
changed in the meantime, nothing is applied and the new plan waits for approval.`,
		Example: `  terraplane approve module/network -n platform
  terraplane approve s3bucket/bucket-6f1c -n terraplane-system --plan 3f9a6c1e2b7d4a50 --yes --wait`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := ctrl.SetupSignalHandler()
			return approve(ctx, cmd, &kube, args[0], namespace, id, yes, wait)
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace of the resource")
	cmd.Flags().StringVar(&id, "plan", "", "approve only if the pending plan has this id")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the plan is applied")
	kube.bind(cmd.Flags())
	return cmd
}

func approve(ctx context.Context, cmd *cobra.Command, kube *kubeFlags, ref, namespace, id string, yes, wait bool) error {
	c, mg, err := getManaged(ctx, kube, ref, namespace)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	pending := pendingPlanOf(mg)
	if pending == nil {
		return fmt.Errorf("%s holds no plan: nothing to approve", ref)
	}
	if synced := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeSynced); synced == nil || synced.Status != "False" {
		return fmt.Errorf("%s leaves plan %s unapplied because its managementPolicies do not include Update: approving cannot apply it", ref, pending.ID)
	}
	if id != "" && id != pending.ID {
		return fmt.Errorf("the pending plan of %s is %s, not %s: nothing was approved", ref, pending.ID, id)
	}
	if err := printPlan(ctx, out, c, mg); err != nil {
		return err
	}
	if !yes && !confirm(cmd.InOrStdin(), out, fmt.Sprintf("Apply plan %s to %s? [y/N] ", pending.ID, ref)) {
		return fmt.Errorf("not approved")
	}
	patch := fmt.Sprintf(`{"spec":{"approvedPlan":%q}}`, pending.ID)
	if err := c.Patch(ctx, mg, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("approve %s: %w", ref, err)
	}
	fmt.Fprintf(out, "approved plan %s of %s\n", pending.ID, ref)
	if !wait {
		return nil
	}
	return waitApplied(ctx, out, c, mg, pending.ID)
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

// printPlan prints mg's pending or last plan: its summary from status, then its text.
func printPlan(ctx context.Context, out io.Writer, c client.Client, mg resource.Managed) error {
	tf := mg.GetManagedStatus().Terraform
	if tf.Plan == nil {
		fmt.Fprintf(out, "%s/%s has no plan with changes yet\n", mg.GetNamespace(), mg.GetName())
		return nil
	}
	p := tf.Plan
	state := "applied " + formatTime(tf.LastApply)
	if pendingPlanOf(mg) != nil {
		synced := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeSynced)
		state = "pending"
		if synced != nil && synced.Status == "False" {
			state = "pending: " + synced.Reason
		} else if meta.IsStatusConditionTrue(mg.GetManagedStatus().Conditions, common.TypeDrifted) {
			state = "pending: drift not corrected (managementPolicies)"
		}
	} else if tf.LastApply == nil || tf.LastApply.ID != p.ID {
		state = "not applied"
	}
	fmt.Fprintf(out, "Plan %s (%s, made %s; %s)\n", p.ID, p.Reason, p.CreatedAt.UTC().Format(time.RFC3339), state)
	fmt.Fprintf(out, "  +%d to add, ~%d to change, -%d to destroy, -/+%d to replace", p.Add, p.Change, p.Destroy, p.Replace)
	if p.Import > 0 {
		fmt.Fprintf(out, ", %d to import", p.Import)
	}
	fmt.Fprintln(out)
	text, err := planText(ctx, c, mg, p.ID)
	if err != nil {
		return err
	}
	if text != "" {
		fmt.Fprintf(out, "\n%s", text)
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

// getManaged reads the managed resource KIND/NAME in namespace.
func getManaged(ctx context.Context, kube *kubeFlags, ref, namespace string) (client.Client, resource.Managed, error) {
	kindName, name, ok := strings.Cut(ref, "/")
	if !ok || kindName == "" || name == "" {
		return nil, nil, fmt.Errorf("name the resource as KIND/NAME, e.g. s3bucket/photos")
	}
	reg := kinds.NewRegistry(nil)
	kind, err := findKind(reg, kindName)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := kube.restConfig()
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: reg.Scheme()})
	if err != nil {
		return nil, nil, err
	}
	mg := kind.New()
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, mg); err != nil {
		return nil, nil, fmt.Errorf("get %s: %w", ref, err)
	}
	mg.GetObjectKind().SetGroupVersionKind(kind.GVK)
	return c, mg, nil
}
