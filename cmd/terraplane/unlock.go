package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/statelock"
)

func unlockCommand() *cobra.Command {
	var ns nsFlags
	var lockID string
	var kube kubeFlags
	cmd := &cobra.Command{
		Use:   "unlock KIND/NAME",
		Short: "Release the Terraform state lock of a managed resource whose run is gone",
		Long: `Release the Terraform state lock of a managed resource, as terraform force-unlock does.

The controller releases locks its own interrupted runs left behind by itself. Use this
command for a lock it cannot vouch for (taken by another host), after making sure that
run is gone. KIND is the managed kind, by kind, plural or short name (S3Bucket,
s3buckets, module, ...); add its group when two kinds share a name
(database.database.postgresql.terraplane.io). The resource is looked for in the admin
namespace (terraplane-system, or --admin-namespace) unless -n names another.`,
		Example: `  terraplane unlock S3Bucket/photos
  terraplane unlock database.database.postgresql.terraplane.io/orders -n platform --lock-id 4b1c...
  terraplane unlock module/network -n platform -o json`,
		Args: refArgs,
	}
	out := bindOutput(cmd, "", "json", "yaml")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := ctrl.SetupSignalHandler()
		return unlock(ctx, cmd, &kube, &ns, args, lockID, out)
	}
	ns.bind(cmd.Flags())
	cmd.Flags().StringVar(&lockID, "lock-id", "", "release the lock only if it still has this ID")
	kube.bind(cmd.Flags())
	return cmd
}

// unlocked is what unlock -o json prints.
type unlocked struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	// Released is the lock released; nil when the state was not locked.
	Released *statelock.LockInfo `json:"released,omitempty"`
}

func unlock(ctx context.Context, cmd *cobra.Command, kube *kubeFlags, ns *nsFlags, args []string, lockID string, o *output) error {
	s, mg, err := getManaged(ctx, cmd, kube, ns, args)
	if err != nil {
		return err
	}
	gvk := mg.GetObjectKind().GroupVersionKind()
	ref := gvk.Kind + "/" + mg.GetName()
	result := unlocked{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: mg.GetNamespace(), Name: mg.GetName()}
	key := client.ObjectKey{Namespace: mg.GetNamespace(), Name: "lock-" + resource.StateSecretName(mg)}
	info, err := statelock.LockHolder(ctx, s.client, key)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if info != nil {
		if err := statelock.Unlock(ctx, s.client, key, lockID); err != nil {
			return err
		}
		result.Released = info
	}
	switch {
	case o.data():
		return o.print(out, result)
	case info == nil:
		fmt.Fprintf(out, "%s: the Terraform state is not locked\n", ref)
	default:
		fmt.Fprintf(out, "%s: released the Terraform state lock %s (held by %s for %s since %s)\n",
			ref, info.ID, info.Who, info.Operation, info.Created.UTC().Format("2006-01-02 15:04:05 MST"))
	}
	return nil
}
