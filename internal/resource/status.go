package resource

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchStatus writes obj's status as a merge patch from orig and sends nothing when the
// patch is empty, so a reconcile that changed nothing costs the API server no request.
func PatchStatus(ctx context.Context, c client.Client, obj, orig client.Object) error {
	data, err := client.MergeFrom(orig).Data(obj)
	if err != nil {
		return fmt.Errorf("compute status patch: %w", err)
	}
	if string(data) == "{}" {
		return nil
	}
	return c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, data))
}
