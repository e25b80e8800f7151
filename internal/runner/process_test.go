package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	kfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestIdentities: a pool gets its ServiceAccount in its namespace, bound there to the
// runner role (made once), and a token minted for that ServiceAccount; again, nothing
// is made twice.
func TestIdentities(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = rbacv1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	tokens := kfake.NewClientset(&corev1.ServiceAccount{})
	var minted []string
	tokens.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		minted = append(minted, a.GetNamespace())
		return true, &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: "token-of-" + a.GetNamespace()}}, nil
	})
	id := &Identities{Client: c, Tokens: tokens, EnsureRole: true}
	ctx := context.Background()
	pool := PoolRef{Namespace: "team-a", Name: DefaultPool}
	for range 2 {
		token, err := id.Ensure(ctx, pool)
		if err != nil || token != "token-of-team-a" {
			t.Fatalf("token %q, %v", token, err)
		}
	}
	var sa corev1.ServiceAccount
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "terraplane-runner-default"}, &sa); err != nil {
		t.Fatalf("the pool's ServiceAccount: %v", err)
	}
	var rb rbacv1.RoleBinding
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "terraplane-runner-default"}, &rb); err != nil {
		t.Fatalf("the pool's binding: %v", err)
	}
	if rb.RoleRef.Name != RunnerClusterRole || len(rb.Subjects) != 1 || rb.Subjects[0].Namespace != "team-a" || rb.Subjects[0].Name != sa.Name {
		t.Errorf("binding %+v, want the runner role for the pool's ServiceAccount only", rb)
	}
	var role rbacv1.ClusterRole
	if err := c.Get(ctx, client.ObjectKey{Name: RunnerClusterRole}, &role); err != nil {
		t.Fatalf("the runner role: %v", err)
	}
	for _, rule := range role.Rules {
		for _, res := range rule.Resources {
			if res != "secrets" && res != "leases" {
				t.Errorf("the runner role grants %s; a runner needs Secrets and Leases only", res)
			}
		}
	}
	if len(minted) != 2 {
		t.Errorf("%d tokens minted, want one per Ensure", len(minted))
	}
}

// TestIdentitiesWithoutRBACRights: a controller that may not create ClusterRoles (in a
// cluster, where the chart ships the runner role) still gives pools their identity.
func TestIdentitiesWithoutRBACRights(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = rbacv1.AddToScheme(scheme)
	forbidden := interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if _, ok := obj.(*rbacv1.ClusterRole); ok {
			return apierrors.NewForbidden(rbacv1.Resource("clusterroles"), obj.GetName(), errors.New("no RBAC rights"))
		}
		return c.Create(ctx, obj, opts...)
	}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(forbidden).Build()
	tokens := kfake.NewClientset(&corev1.ServiceAccount{})
	tokens.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return a.GetSubresource() == "token", &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: "t"}}, nil
	})
	id := &Identities{Client: c, Tokens: tokens, EnsureRole: true}
	if token, err := id.Ensure(context.Background(), PoolRef{Namespace: "team-a", Name: DefaultPool}); err != nil || token != "t" {
		t.Fatalf("Ensure = %q, %v; want the pool's token", token, err)
	}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "terraplane-runner-default"}, &rbacv1.RoleBinding{}); err != nil {
		t.Errorf("the pool's binding: %v", err)
	}
}

// TestPoolDirectories: a pool's directory is its uid's alone; the ones above it may be
// passed through, not listed; the kubeconfig reaches the API server with the pool's
// token file.
func TestPoolDirectories(t *testing.T) {
	root := filepath.Join(t.TempDir(), "runners")
	p := &Processes{Dir: root, Config: &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca")}}, Log: logr.Discard()}
	uid := -1
	if os.Geteuid() == 0 {
		uid = 4242
	}
	dir, err := p.poolDir(PoolRef{"team-a", "gold"}, uid)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{root: 0o711, filepath.Join(root, "pools"): 0o711, dir: 0o700, filepath.Join(dir, "work"): 0o700} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", path, got, want)
		}
	}
	kubeconfig, err := p.writeKubeconfig(dir, "pool-token", uid)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:6443" || string(cfg.CAData) != "ca" || cfg.BearerTokenFile != filepath.Join(dir, "token") {
		t.Errorf("runner config %+v", cfg)
	}
	if token, err := os.ReadFile(cfg.BearerTokenFile); err != nil || string(token) != "pool-token" {
		t.Errorf("token file %q, %v", token, err)
	}
	for _, f := range []string{kubeconfig, cfg.BearerTokenFile} {
		if info, _ := os.Stat(f); info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %o, want 0600", f, info.Mode().Perm())
		}
	}
}

// TestLinkTree: a tree is shared readable, symlinks resolved, without touching what is
// shared already.
func TestLinkTree(t *testing.T) {
	src := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "registry", "hashicorp", "random"), 0o700))
	must(os.WriteFile(filepath.Join(src, "real-provider"), []byte("binary"), 0o700))
	must(os.Symlink(filepath.Join(src, "real-provider"), filepath.Join(src, "registry", "hashicorp", "random", "terraform-provider-random")))
	dst := filepath.Join(t.TempDir(), "mirror")
	must(linkTree(src, dst))
	must(linkTree(src, dst)) // again: shared already
	got := filepath.Join(dst, "registry", "hashicorp", "random", "terraform-provider-random")
	info, err := os.Lstat(got)
	must(err)
	if info.Mode()&os.ModeSymlink != 0 || info.Mode().Perm()&0o444 != 0o444 {
		t.Errorf("%s: mode %v, want a readable file, not a link", got, info.Mode())
	}
	if b, _ := os.ReadFile(got); string(b) != "binary" {
		t.Errorf("shared file holds %q", b)
	}
	dirInfo, err := os.Stat(filepath.Join(dst, "registry"))
	must(err)
	if dirInfo.Mode().Perm() != 0o755 {
		t.Errorf("shared directory mode %o, want 0755", dirInfo.Mode().Perm())
	}
	// a single file is shared as itself
	one := filepath.Join(t.TempDir(), "bin", "terraform")
	must(linkTree(filepath.Join(src, "real-provider"), one))
	if b, _ := os.ReadFile(one); string(b) != "binary" {
		t.Errorf("a single shared file holds %q", b)
	}
}

// TestUIDs: pools get stable, distinct uids when this process may switch uid.
func TestUIDs(t *testing.T) {
	p := &Processes{UIDBase: 30000}
	a, b := p.uid(PoolRef{"team-a", "default"}), p.uid(PoolRef{"team-b", "default"})
	if os.Geteuid() != 0 {
		if a != -1 {
			t.Errorf("without root a runner runs as this uid, got %d", a)
		}
		return
	}
	if a < 30000 || a >= 40000 || a == b || a != p.uid(PoolRef{"team-a", "default"}) {
		t.Errorf("uids %d and %d: want distinct, stable, from the base", a, b)
	}
}
