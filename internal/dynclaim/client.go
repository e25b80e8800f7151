package dynclaim

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Client reads and writes Claims and Classes as unstructured objects of their kind and
// passes every other object through unchanged.
type Client struct {
	client.Client
	// Cache, when set, is where Claims and Classes are read: a controller-runtime client
	// reads unstructured objects from the API server, though the informers of the kinds a
	// controller watches hold them already, as they hold the compiled-in kinds the client
	// reads from them.
	Cache client.Reader
}

// Get reads obj.
func (c Client) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	d, ok := obj.(Object)
	if !ok {
		return c.Client.Get(ctx, key, obj, opts...)
	}
	var from client.Reader = c.Client
	if c.Cache != nil {
		from = c.Cache
	}
	u := d.Unstructured()
	if err := from.Get(ctx, key, u, opts...); err != nil {
		return err
	}
	return fromUnstructured(u, d)
}

// Create creates obj.
func (c Client) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return c.write(obj, func(o client.Object) error { return c.Client.Create(ctx, o, opts...) })
}

// Update updates obj.
func (c Client) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.write(obj, func(o client.Object) error { return c.Client.Update(ctx, o, opts...) })
}

// Patch patches obj.
func (c Client) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.write(obj, func(o client.Object) error { return c.Client.Patch(ctx, o, patch, opts...) })
}

// Delete deletes obj.
func (c Client) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.write(obj, func(o client.Object) error { return c.Client.Delete(ctx, o, opts...) })
}

// Status writes the status subresource.
func (c Client) Status() client.SubResourceWriter {
	return statusWriter{w: c.Client.Status(), c: c}
}

// write converts a dynclaim object to unstructured, runs op on it and reads the answer back.
func (c Client) write(obj client.Object, op func(client.Object) error) error {
	d, ok := obj.(Object)
	if !ok {
		return op(obj)
	}
	u, err := toUnstructured(d)
	if err != nil {
		return err
	}
	if err := op(u); err != nil {
		return err
	}
	return fromUnstructured(u, d)
}

type statusWriter struct {
	w client.SubResourceWriter
	c Client
}

func (s statusWriter) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	return s.c.write(obj, func(o client.Object) error { return s.w.Create(ctx, o, sub, opts...) })
}

func (s statusWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.c.write(obj, func(o client.Object) error { return s.w.Update(ctx, o, opts...) })
}

func (s statusWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.c.write(obj, func(o client.Object) error { return s.w.Patch(ctx, o, patch, opts...) })
}

func (s statusWriter) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	return s.w.Apply(ctx, obj, opts...)
}

func toUnstructured(d Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		return nil, fmt.Errorf("convert %s to unstructured: %w", d.GetObjectKind().GroupVersionKind().Kind, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// ClaimFrom reads u, an object of a defined claim kind, as a Claim.
func ClaimFrom(u *unstructured.Unstructured) (*Claim, error) {
	c := NewClaim(u.GroupVersionKind())
	if err := fromUnstructured(u, c); err != nil {
		return nil, err
	}
	return c, nil
}

func fromUnstructured(u *unstructured.Unstructured, d Object) error {
	gvk := d.GetObjectKind().GroupVersionKind()
	d.reset()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
		return fmt.Errorf("convert %s %s: %w", gvk.Kind, u.GetName(), err)
	}
	d.GetObjectKind().SetGroupVersionKind(gvk)
	return nil
}
