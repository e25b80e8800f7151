package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"terraplane.io/terraplane/internal/kref"
	"terraplane.io/terraplane/internal/trace"
)

func traceCommand() *cobra.Command {
	var ns nsFlags
	var kube kubeFlags
	cmd := &cobra.Command{
		Use:   "trace KIND/NAME",
		Short: "Show what a claim, managed resource or application depends on, and where it is stuck",
		Long: `Show the tree of what an object depends on, each with its READY and SYNCED conditions, the
reason it stands where it does, and its age, as crossplane beta trace does:

  claim → portable class → non-portable class
        → managed resource → Provider → credentials Secret
                           → connection Secret
                           → plan held unapplied (awaiting approval, refused, or drift
                             the managementPolicies leave alone)
                           → its runner pool: the pool's runner Deployment (--runner
                             deployment), or its runner process (--runner process)
        → the claim's connection Secret
  KubernetesApplication → its cluster (a KubernetesCluster claim, traced as a claim, or a
                          ProviderConfig) → its KubernetesApplicationResources → their Secrets

Any claim kind works (compiled in or made by a ClaimDefinition), and any managed kind. It
reads with your rights only: what you may not read (a claimer cannot read the admin
namespace) is shown as Forbidden, and the trace goes on. -n defaults to the kubeconfig
context's namespace, or to the admin namespace for managed resources and Providers.

-o wide adds each condition's message; -o json and -o yaml give the tree as data; -o dot
gives a Graphviz graph (terraplane trace ... -o dot | dot -Tsvg > trace.svg).`,
		Example: `  terraplane trace bucket/photos -n demo
  terraplane trace s3bucket/demo-photos-x2k9 -o wide
  terraplane trace kubernetesapplication/wordpress -n team-a -o json
  terraplane trace network.platform.example.org/core -n team-a -o dot | dot -Tsvg > core.svg`,
		Args: refArgs,
	}
	out := bindOutput(cmd, "", append([]string(nil), trace.Formats...)...)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := ctrl.SetupSignalHandler()
		s, err := kube.connect(&ns, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		t, err := s.resolve(args)
		if err != nil {
			return err
		}
		kinds := s.kindInfo()
		tracer := &trace.Tracer{Reader: s.client, Kinds: kinds,
			Runner: trace.Runners{Reader: s.client, Terraform: kinds.RunsTerraform}.Node}
		root, err := tracer.Trace(ctx, t.gvk, t.namespace, t.name)
		if err != nil {
			return err
		}
		if err := trace.Print(cmd.OutOrStdout(), root, out.format, time.Now()); err != nil {
			return err
		}
		if hidden := forbidden(root); len(hidden) > 0 && !out.data() {
			fmt.Fprintf(cmd.ErrOrStderr(), "note: your rights do not let you read %s; what lies below them is not shown\n", strings.Join(hidden, ", "))
		}
		return nil
	}
	ns.bind(cmd.Flags())
	kube.bind(cmd.Flags())
	return cmd
}

// forbidden lists the nodes the caller may not read, as namespace/Kind/name.
func forbidden(n *trace.Node) []string {
	var out []string
	if n.Error == "Forbidden" {
		out = append(out, n.Namespace+"/"+n.Display)
	}
	for _, c := range n.Children {
		out = append(out, forbidden(c)...)
	}
	return out
}

func getCommand() *cobra.Command {
	cmd := group(&cobra.Command{
		Use:     "get",
		Short:   "List what kubectl get cannot: the plans awaiting approval",
		Example: "  terraplane get approvals",
	})
	var ns nsFlags
	var kube kubeFlags
	approvals := &cobra.Command{
		Use:     "approvals",
		Aliases: []string{"approval", "plans"},
		Short:   "List every managed resource whose plan waits: for approval, refused, or drift left alone",
		Long: `List every managed resource (of any managed kind) that holds a plan it has not applied
because change control holds it: awaiting approval (approval: Manual), a destructive
change refused (destructiveChanges: Refuse), an adoption refused, a create the
managementPolicies forbid, or drift they leave alone. Each row gives the resource, the
plan id (what spec.approvedPlan takes), the reason, the counts (+add ~change -destroy
-/+replace) and the plan's age.

It looks in every namespace you may list; where you may not list all namespaces, in the
admin namespace (--admin-namespace) and the kubeconfig context's namespace. -n looks in
that namespace only.`,
		Example: `  terraplane get approvals
  terraplane get approvals -n platform -o wide
  terraplane get approvals -o json | jq -r '.items[] | "\(.kind)/\(.name) -n \(.namespace)"'`,
		Args: cobra.NoArgs,
	}
	out := bindOutput(approvals, "", "wide", "json", "yaml")
	approvals.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx := ctrl.SetupSignalHandler()
		s, err := kube.connect(&ns, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		kinds, err := s.disco.WithCategory(kref.CategoryManaged)
		if err != nil {
			return err
		}
		fallback := []string{s.ns.Admin}
		if s.ns.Context != s.ns.Admin {
			fallback = append(fallback, s.ns.Context)
		}
		list, err := trace.ListApprovals(ctx, s.client, kinds, trace.Scope{Namespace: ns.namespace, Fallback: fallback})
		if err != nil {
			return err
		}
		if err := trace.PrintApprovals(cmd.OutOrStdout(), list, out.format, time.Now()); err != nil {
			return err
		}
		return noteScope(cmd, list, out)
	}
	ns.bind(approvals.Flags())
	kube.bind(approvals.Flags())
	cmd.AddCommand(approvals)
	return cmd
}

// noteScope says on stderr where get approvals could not look, and that it found none.
func noteScope(cmd *cobra.Command, list *trace.ApprovalList, out *output) error {
	w := cmd.ErrOrStderr()
	if len(list.Namespaces) > 0 {
		fmt.Fprintf(w, "note: you may not list managed resources in all namespaces; looked in %s\n", strings.Join(list.Namespaces, ", "))
	}
	if len(list.Unreadable) > 0 {
		fmt.Fprintf(w, "note: you may not list managed resources in %s\n", strings.Join(list.Unreadable, ", "))
	}
	if len(list.Items) == 0 && !out.data() {
		fmt.Fprintln(w, "No plans await approval.")
	}
	return nil
}
