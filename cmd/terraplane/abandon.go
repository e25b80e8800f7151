package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

func abandonCommand() *cobra.Command {
	var ns nsFlags
	var kube kubeFlags
	var undo bool
	cmd := &cobra.Command{
		Use:   "abandon KIND/NAME",
		Short: "Make a managed resource's deletion keep what it manages",
		Long: `Mark a Terraform managed resource abandoned (annotation terraplane.io/abandon=true):
its deletion then destroys nothing, whatever its reclaim policy, and keeps the external
objects and the Terraform state Secret. Use it before deleting a resource whose
infrastructure must outlive it, or to release one whose destroy cannot succeed.
Nothing changes until the resource is deleted; --undo takes the mark off.

KIND is the managed kind, by kind, plural or short name (S3Bucket, s3buckets, module,
...). The resource is looked for in the admin namespace (terraplane-system, or
--admin-namespace) unless -n names another.`,
		Example: `  terraplane abandon module/network -n platform
  kubectl delete module network -n platform   # destroys nothing
  terraplane abandon S3Bucket/photos --undo -o json`,
		Args: refArgs,
	}
	out := bindOutput(cmd, "", "json", "yaml")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := ctrl.SetupSignalHandler()
		s, mg, err := getManaged(ctx, cmd, &kube, &ns, args)
		if err != nil {
			return err
		}
		return abandon(ctx, s.client, mg, !undo, cmd.OutOrStdout(), out)
	}
	ns.bind(cmd.Flags())
	cmd.Flags().BoolVar(&undo, "undo", false, "take the mark off: deleting the resource destroys what it manages again, as its reclaim policy says")
	kube.bind(cmd.Flags())
	return cmd
}

// abandoned is what abandon -o json prints.
type abandoned struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	Abandoned  bool   `json:"abandoned"`
}

// abandon sets (or, with on false, removes) mg's abandon annotation and says what its
// deletion does now.
func abandon(ctx context.Context, c client.Client, mg resource.Managed, on bool, w io.Writer, o *output) error {
	gvk := mg.GetObjectKind().GroupVersionKind()
	ref := gvk.Kind + "/" + mg.GetName()
	value := `"true"`
	if !on {
		value = "null"
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, common.AbandonAnnotation, value)
	if err := c.Patch(ctx, mg, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("abandon %s: %w", ref, err)
	}
	if o.data() {
		return o.print(w, abandoned{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: mg.GetNamespace(), Name: mg.GetName(), Abandoned: on})
	}
	if on {
		fmt.Fprintf(w, "%s in %s is abandoned: deleting it destroys nothing and keeps the external objects and the Terraform state\n", ref, mg.GetNamespace())
		return nil
	}
	fmt.Fprintf(w, "%s in %s is no longer abandoned: deleting it follows its reclaim policy (%s)\n", ref, mg.GetNamespace(), mg.GetManagedSpec().ReclaimPolicy)
	return nil
}
