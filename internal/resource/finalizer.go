package resource

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// AddFinalizer puts Finalizer on obj, writing it only when it was missing.
func AddFinalizer(ctx context.Context, c client.Client, obj client.Object) error {
	if controllerutil.AddFinalizer(obj, Finalizer) {
		if err := c.Update(ctx, obj); err != nil {
			return fmt.Errorf("add finalizer: %w", err)
		}
	}
	return nil
}

// RemoveFinalizer takes Finalizer off obj, letting its deletion finish.
func RemoveFinalizer(ctx context.Context, c client.Client, obj client.Object) error {
	if controllerutil.RemoveFinalizer(obj, Finalizer) {
		if err := c.Update(ctx, obj); err != nil {
			return fmt.Errorf("remove finalizer: %w", err)
		}
	}
	return nil
}
