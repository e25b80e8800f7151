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

// TestProcessUIDs: as root a pool's runner gets the uid its table records; otherwise it
// runs as this process's uid, which only SharedUID accepts.
func TestProcessUIDs(t *testing.T) {
	dir := t.TempDir()
	defer func(f func() int) { geteuid = f }(geteuid)
	for _, tc := range []struct {
		name    string
		euid    int
		shared  bool
		wantUID int
		refused bool
	}{
		{"root", 0, false, 30000, false},
		{"root, sharing accepted but not needed", 0, true, 30000, false},
		{"a user", 1000, false, -1, true},
		{"a user who accepts sharing its uid", 1000, true, -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			geteuid = func() int { return tc.euid }
			p := &Processes{Dir: filepath.Join(dir, tc.name), SharedUID: tc.shared, Log: logr.Discard(),
				uids: &uidTable{path: filepath.Join(dir, tc.name, "uids.json"), base: 30000, count: 10, hostOwner: noHostUsers}}
			uid, err := p.uid(PoolRef{"team-a", "default"})
			var shared *SharedUIDError
			if tc.refused != errors.As(err, &shared) || !tc.refused && err != nil {
				t.Fatalf("uid: %v; want refused: %v", err, tc.refused)
			}
			if uid != tc.wantUID {
				t.Errorf("uid %d, want %d", uid, tc.wantUID)
			}
			if err := p.Check(); (err != nil) != tc.refused {
				t.Errorf("Check: %v; want refused: %v", err, tc.refused)
			}
		})
	}
	geteuid = func() int { return 0 }
	if _, err := (&Processes{Dir: dir}).uid(PoolRef{"team-a", "default"}); err == nil {
		t.Error("as root without a uid table a runner got a uid")
	}
}

// TestPoolDirectoryFollowsNoLink: what a runner left in its directory (a link where its
// work directory, token or kubeconfig goes) is replaced, never followed: the
// controller, as root, would otherwise give the link's target to the runner's uid, or
// write the token into it.
func TestPoolDirectoryFollowsNoLink(t *testing.T) {
	root := t.TempDir()
	p := &Processes{Dir: filepath.Join(root, "runners"), Config: &rest.Config{Host: "https://127.0.0.1:6443"}, Log: logr.Discard()}
	pool := PoolRef{"team-a", "gold"}
	uid := -1
	if os.Geteuid() == 0 {
		uid = 4242
	}
	dir, err := p.poolDir(pool, uid)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(root, "controller-file")
	targetDir := filepath.Join(root, "controller-dir")
	if err := os.WriteFile(target, []byte("the controller's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(targetDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "work")); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"work": targetDir, "token": target, "kubeconfig": target} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.poolDir(pool, uid); err != nil {
		t.Fatal(err)
	}
	if _, err := p.writeKubeconfig(dir, "pool-token", uid); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"work", "token", "kubeconfig"} {
		if info, err := os.Lstat(filepath.Join(dir, f)); err != nil || info.Mode()&os.ModeSymlink != 0 {
			t.Errorf("%s: %v, %v; want a file or directory of its own", f, info, err)
		}
	}
	if raw, _ := os.ReadFile(target); string(raw) != "the controller's" {
		t.Errorf("the link's target was written: %q", raw)
	}
	for _, f := range []string{target, targetDir} {
		if owner, _ := ownerOf(f); owner != os.Geteuid() {
			t.Errorf("%s was given to uid %d", f, owner)
		}
	}
}
