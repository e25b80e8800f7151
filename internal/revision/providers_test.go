package revision

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
)

// TestProviderConfigNames: a template's providerRef and providerConfigRefs, each once.
func TestProviderConfigNames(t *testing.T) {
	cases := map[string]struct {
		tmpl map[string]any
		want []string
	}{
		"none":     {map[string]any{"forProvider": map[string]any{}}, nil},
		"a ref":    {map[string]any{"providerRef": map[string]any{"name": "aws"}}, []string{"aws"}},
		"refs":     {map[string]any{"providerRef": map[string]any{"name": "a"}, "providerConfigRefs": []any{map[string]any{"name": "b"}, map[string]any{"name": "a"}}}, []string{"a", "b"}},
		"no names": {map[string]any{"providerRef": map[string]any{}, "providerConfigRefs": []any{"x"}}, nil},
	}
	for name, tc := range cases {
		if diff := cmp.Diff(tc.want, ProviderConfigNames(tc.tmpl)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// TestProviderConfigSnapshot: a revision keeps the specs of the ProviderConfigs that exist,
// and a Get through it returns a kept one with the kept spec (not found once deleted),
// while other ProviderConfigs, other namespaces and Secrets are read as they are now.
func TestProviderConfigSnapshot(t *testing.T) {
	ctx := context.Background()
	gvk := terraformv1.GroupVersion.WithKind("ProviderConfig")
	pc := func(ns, name, version string) *terraformv1.ProviderConfig {
		return &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: version,
				Credentials: []terraformv1.CredentialEnv{{Env: "TOKEN", SecretKeyRef: terraformv1.SecretKeySelector{Name: "creds", Key: "token"}}}}}
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "creds"}, Data: map[string][]byte{"token": []byte("v1")}}
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(pc("admin", "random", "3.9.0"), pc("admin", "other", "3.9.0"), pc("elsewhere", "random", "3.9.0"), secret).Build()

	kept, err := SnapshotProviderConfigs(ctx, c, "admin", gvk, []string{"random", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 1 || kept[0].Name != "random" {
		t.Fatalf("kept %+v, want random alone", kept)
	}
	rev := &terraformv1.ClassRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "pets-1"}, Spec: terraformv1.ClassRevisionSpec{ProviderConfigs: kept}}

	for _, name := range []string{"random", "other"} {
		live := &terraformv1.ProviderConfig{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "admin", Name: name}, live); err != nil {
			t.Fatal(err)
		}
		live.Spec.Version, live.Spec.Alias = "3.10.0", "second"
		if err := c.Update(ctx, live); err != nil {
			t.Fatal(err)
		}
	}
	secret.Data["token"] = []byte("v2")
	if err := c.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	at := WithProviderConfigs(c, rev, gvk)
	version := func(ns, name string) string {
		got := &terraformv1.ProviderConfig{}
		if err := at.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, got); err != nil {
			t.Fatal(err)
		}
		if got.Name != name || got.Namespace != ns {
			t.Errorf("got %s/%s, want %s/%s", got.Namespace, got.Name, ns, name)
		}
		if ns == "admin" && name == "random" && got.Spec.Alias != "" {
			t.Errorf("a field set since the revision was made shows at the revision: alias %q", got.Spec.Alias)
		}
		return got.Spec.Version
	}
	for _, tc := range []struct{ ns, name, want string }{
		{"admin", "random", "3.9.0"}, {"admin", "other", "3.10.0"}, {"elsewhere", "random", "3.9.0"},
	} {
		if got := version(tc.ns, tc.name); got != tc.want {
			t.Errorf("%s/%s at the revision has version %q, want %q", tc.ns, tc.name, got, tc.want)
		}
	}
	s := &corev1.Secret{}
	if err := at.Get(ctx, client.ObjectKey{Namespace: "admin", Name: "creds"}, s); err != nil || string(s.Data["token"]) != "v2" {
		t.Errorf("the credentials' Secret is read as it is now: %q, %v", s.Data["token"], err)
	}
	if err := c.Delete(ctx, pc("admin", "random", "")); err != nil {
		t.Fatal(err)
	}
	if err := at.Get(ctx, client.ObjectKey{Namespace: "admin", Name: "random"}, &terraformv1.ProviderConfig{}); !apierrors.IsNotFound(err) {
		t.Errorf("a deleted ProviderConfig the revision keeps: %v, want not found", err)
	}
	if WithProviderConfigs(c, &terraformv1.ClassRevision{}, gvk) != c || WithProviderConfigs(c, nil, gvk) != c {
		t.Error("a revision that keeps no ProviderConfig reads them as they are now")
	}
}
