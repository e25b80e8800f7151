package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
	"terraplane.io/terraplane/internal/plandoc"
	"terraplane.io/terraplane/internal/planpolicy"
)

func policyCommand() *cobra.Command {
	cmd := group(&cobra.Command{
		Use:     "policy",
		Short:   "Test plan policies offline",
		Example: "  terraplane policy test policies.yaml --plan plan.json",
	})
	cmd.AddCommand(policyTestCommand())
	return cmd
}

// policyTestOptions are policy test's flags.
type policyTestOptions struct {
	plan, object, claim, namespace string
	labels                         map[string]string
}

func policyTestCommand() *cobra.Command {
	var o policyTestOptions
	test := &cobra.Command{
		Use:   "test POLICY.yaml --plan PLAN.json",
		Short: "Evaluate the PlanPolicies of a file on a Terraform plan, without a cluster",
		Long: `Evaluate the rules of the PlanPolicies and NamespacedPlanPolicies in POLICY.yaml on a
plan, as the controller does before an apply: PLAN.json is what terraform show -json PLANFILE
prints. Sensitive values are redacted before the rules see them.

Without --object every policy is evaluated (only its resourceTypes narrow the plan); with
--object (a managed resource's YAML) only the policies that match it, with its claim
(--claim) and tenant namespace (--namespace, --namespace-labels).

Exits 1 when a rule denies the plan (a failed Deny rule, or one that cannot be evaluated
or does not compile), 0 otherwise; RequireApproval and Warn results are printed.`,
		Example: `  terraform show -json tfplan > plan.json
  terraplane policy test docs/examples/policies.yaml --plan plan.json
  terraplane policy test policies.yaml --plan plan.json --namespace shop --namespace-labels env=dev -o json`,
		Args: cobra.ExactArgs(1),
	}
	out := bindOutput(test, "", "json", "yaml")
	test.Flags().StringVar(&o.plan, "plan", "", "the plan's JSON (terraform show -json PLANFILE)")
	test.Flags().StringVar(&o.object, "object", "", "a managed resource's YAML: evaluate only the policies that match it, with it as object")
	test.Flags().StringVar(&o.claim, "claim", "", "its claim's YAML, seen as claim")
	test.Flags().StringVar(&o.namespace, "namespace", "", "the tenant namespace's name (namespaceObject.metadata.name)")
	test.Flags().StringToStringVar(&o.labels, "namespace-labels", nil, "the tenant namespace's labels, k=v,...")
	_ = test.MarkFlagRequired("plan")
	test.RunE = func(cmd *cobra.Command, args []string) error {
		report, err := testPolicies(cmd.Context(), args[0], o)
		if err != nil {
			return err
		}
		if out.data() {
			err = out.print(cmd.OutOrStdout(), report)
		} else {
			printPolicyReport(cmd.OutOrStdout(), report)
		}
		if err == nil && report.Denied {
			return errDenied
		}
		return err
	}
	return test
}

// errDenied is policy test's failure when a rule denies the plan.
var errDenied = errors.New("the plan is denied")

// policyReport is what policy test found, as -o json prints it.
type policyReport struct {
	// Plan is the plan file, and Changes its resource changes.
	Plan    string `json:"plan"`
	Changes int    `json:"changes"`
	// Results are the rules' results, as status.terraform.plan.policies shows them.
	Results []common.PolicyResult `json:"results"`
	// Denied is true when a rule denies the plan.
	Denied bool `json:"denied"`
}

// testPolicies reads the policies, the plan and the context, and evaluates.
func testPolicies(ctx context.Context, policyFile string, o policyTestOptions) (*policyReport, error) {
	raw, err := os.ReadFile(policyFile)
	if err != nil {
		return nil, fmt.Errorf("read policies: %w", err)
	}
	pols, err := planpolicy.ReadPolicies(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", policyFile, err)
	}
	if len(pols) == 0 {
		return nil, fmt.Errorf("%s holds no PlanPolicy or NamespacedPlanPolicy", policyFile)
	}
	planJSON, err := os.ReadFile(o.plan)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	doc, err := plandoc.ParsePlan(planJSON)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.plan, err)
	}
	in := planpolicy.Input{Plan: doc, Namespace: o.namespace, NamespaceLabels: o.labels}
	if in.Object, err = readObject(o.object); err != nil {
		return nil, err
	}
	if in.Claim, err = readObject(o.claim); err != nil {
		return nil, err
	}
	if in.Object != nil {
		pols = matchingOffline(pols, in)
	}
	results := planpolicy.Evaluate(ctx, pols, in)
	report := &policyReport{Plan: o.plan, Changes: len(doc.Changes), Results: []common.PolicyResult{}}
	for _, r := range results {
		report.Results = append(report.Results, common.PolicyResult{Policy: r.Policy, Rule: r.Rule, Result: r.Outcome(), Message: r.Message})
	}
	report.Denied = len(planpolicy.Failed(results, policyv1.EnforcementDeny)) > 0
	return report, nil
}

// readObject reads a YAML object; nil when no file is named.
func readObject(path string) (map[string]any, error) {
	if path == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read object: %w", err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return obj, nil
}

// matchingOffline keeps the policies that match the object given.
func matchingOffline(pols []*planpolicy.Policy, in planpolicy.Input) []*planpolicy.Policy {
	str := func(m map[string]any, path ...string) string {
		var v any = m
		for _, p := range path {
			mm, _ := v.(map[string]any)
			v = mm[p]
		}
		s, _ := v.(string)
		return s
	}
	gv, kind := str(in.Object, "apiVersion"), str(in.Object, "kind")
	group := gv
	if i := len(gv) - len("/v1alpha1"); i > 0 && gv[i:] == "/v1alpha1" {
		group = gv[:i]
	}
	t := planpolicy.Target{Group: group, Kind: kind, Class: str(in.Object, "spec", "classRef", "name"),
		Namespace: str(in.Object, "metadata", "namespace"), ClaimNamespace: str(in.Object, "spec", "claimRef", "namespace"),
		NamespaceLabels: in.NamespaceLabels}
	var out []*planpolicy.Policy
	for _, p := range pols {
		if p.Matches(t) {
			out = append(out, p)
		}
	}
	return out
}

// printPolicyReport prints one line per rule.
func printPolicyReport(w io.Writer, r *policyReport) {
	fmt.Fprintf(w, "%s: %d resource change(s), %d rule(s) evaluated\n", r.Plan, r.Changes, len(r.Results))
	for _, res := range r.Results {
		line := fmt.Sprintf("%-16s %s/%s", res.Result, res.Policy, res.Rule)
		if res.Message != "" {
			line += ": " + res.Message
		}
		fmt.Fprintln(w, line)
	}
	if r.Denied {
		fmt.Fprintln(w, "denied: the controller would apply nothing")
	}
}
