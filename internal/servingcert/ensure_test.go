package servingcert

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestEnsure: the first call makes a certificate and keeps it in the Secret; the next
// reuses it; a certificate for other hosts is replaced; no hosts is an error.
func TestEnsure(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	key := types.NamespacedName{Namespace: "terraplane-system", Name: "webhook-cert"}
	req := Request{Secret: key, Hosts: []string{"hook.terraplane-system.svc"}, Dir: t.TempDir()}
	ca, err := Ensure(ctx, c, req)
	if err != nil || len(ca) == 0 {
		t.Fatalf("first: %d bytes of CA, %v", len(ca), err)
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, key, secret); err != nil || secret.Type != corev1.SecretTypeTLS || !bytes.Equal(secret.Data[CAKey], ca) {
		t.Fatalf("Secret %s: type %s, %v", key, secret.Type, err)
	}
	again, err := Ensure(ctx, c, req)
	if err != nil || !bytes.Equal(again, ca) {
		t.Errorf("second call made another CA (%v)", err)
	}
	req.Hosts = []string{"other.terraplane-system.svc"}
	moved, err := Ensure(ctx, c, req)
	if err != nil || bytes.Equal(moved, ca) {
		t.Errorf("other hosts kept the old certificate (%v)", err)
	}
	if _, err := Ensure(ctx, c, Request{Secret: key, Dir: t.TempDir()}); err == nil {
		t.Error("no hosts: no error")
	}
}

// TestEnsureRaced: when another replica stored its certificate first, this one takes
// it if it serves its hosts, and says which Secret does not otherwise.
func TestEnsureRaced(t *testing.T) {
	ctx := context.Background()
	key := types.NamespacedName{Namespace: "terraplane-system", Name: "webhook-cert"}
	theirs, err := generate([]string{"hook.terraplane-system.svc"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	racing := func() client.Client {
		return fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				stored := &corev1.Secret{}
				stored.Namespace, stored.Name, stored.Data = key.Namespace, key.Name, theirs
				if err := c.Create(ctx, stored); err != nil {
					return err
				}
				return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "secrets"}, key.Name)
			}}).Build()
	}
	ca, err := Ensure(ctx, racing(), Request{Secret: key, Hosts: []string{"hook.terraplane-system.svc"}, Dir: t.TempDir()})
	if err != nil || !bytes.Equal(ca, theirs[CAKey]) {
		t.Errorf("took %d bytes of CA, %v; want the other replica's", len(ca), err)
	}
	_, err = Ensure(ctx, racing(), Request{Secret: key, Hosts: []string{"other.svc"}, Dir: t.TempDir()})
	var unusable *UnusableError
	if !errors.As(err, &unusable) || unusable.Secret != key {
		t.Errorf("another replica's certificate for other hosts: %v", err)
	}
}
