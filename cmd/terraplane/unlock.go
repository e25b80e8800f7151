package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/statelock"
)

func unlockCommand() *cobra.Command {
	var namespace, lockID string
	var kube kubeFlags
	cmd := &cobra.Command{
		Use:   "unlock KIND/NAME",
		Short: "Release the Terraform state lock of a managed resource whose run is gone",
		Long: `Release the Terraform state lock of a managed resource, as terraform force-unlock does.

The controller releases locks its own interrupted runs left behind by itself. Use this
command for a lock it cannot vouch for (taken by another host), after making sure that
run is gone. KIND is the managed kind (S3Bucket, Module, ...); add its group when two
kinds share a name (Database.database.postgresql.terraplane.io).`,
		Example: `  terraplane unlock S3Bucket/photos -n terraplane-system
  terraplane unlock Database.database.postgresql.terraplane.io/orders -n terraplane-system --lock-id 4b1c...`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := ctrl.SetupSignalHandler()
			return unlock(ctx, cmd, &kube, args[0], namespace, lockID)
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace of the resource")
	cmd.Flags().StringVar(&lockID, "lock-id", "", "release the lock only if it still has this ID")
	kube.bind(cmd.Flags())
	return cmd
}

func unlock(ctx context.Context, cmd *cobra.Command, kube *kubeFlags, ref, namespace, lockID string) error {
	c, mg, err := getManaged(ctx, kube, ref, namespace)
	if err != nil {
		return err
	}
	key := client.ObjectKey{Namespace: namespace, Name: "lock-" + resource.StateSecretName(mg)}
	info, err := statelock.LockHolder(ctx, c, key)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if info == nil {
		fmt.Fprintf(out, "%s: the Terraform state is not locked\n", ref)
		return nil
	}
	if err := statelock.Unlock(ctx, c, key, lockID); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: released the Terraform state lock %s (held by %s for %s since %s)\n",
		ref, info.ID, info.Who, info.Operation, info.Created.UTC().Format("2006-01-02 15:04:05 MST"))
	return nil
}

// findKind matches a managed kind by Kind or Kind.group, case-insensitively.
func findKind(reg *registry.Registry, name string) (*registry.ManagedKind, error) {
	kind, group, _ := strings.Cut(name, ".")
	var found []*registry.ManagedKind
	for _, k := range reg.TerraformKinds() {
		if strings.EqualFold(k.GVK.Kind, kind) && (group == "" || strings.EqualFold(k.GVK.Group, group)) {
			found = append(found, k)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no managed kind %q", name)
	case 1:
		return found[0], nil
	}
	groups := make([]string, 0, len(found))
	for _, k := range found {
		groups = append(groups, k.GVK.Kind+"."+k.GVK.Group)
	}
	return nil, fmt.Errorf("%q is ambiguous: use one of %s", name, strings.Join(groups, ", "))
}
