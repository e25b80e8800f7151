package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
)

// fakeDeployments are Deployments on a fake API holding the anchor ClusterRole.
func fakeDeployments(t *testing.T, ttl time.Duration) (*Deployments, client.Client) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	anchor := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: RunnerClusterRole, UID: types.UID("anchor-uid")}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(anchor).WithStatusSubresource(&appsv1.Deployment{}).Build()
	return &Deployments{Client: c, Identities: &Identities{Client: c}, Pod: PodSpec{Image: "terraplane:v1"}, IdleTTL: ttl,
		ReadyTimeout: 200 * time.Millisecond}, c
}

// replicas is the replica count of pool's runner Deployment.
func replicas(t *testing.T, c client.Client, pool PoolRef) int32 {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: pool.Namespace, Name: ServiceAccountName(pool)}, dep); err != nil {
		t.Fatal(err)
	}
	return ptr.Deref(dep.Spec.Replicas, 1)
}

// TestRunnerOwnedByAnchor: every object made for a pool is owned by the terraplane-runner
// ClusterRole (the garbage collector removes them with it), made again or not; an owner
// reference to an earlier role of that name is replaced, and other owners are kept.
func TestRunnerOwnedByAnchor(t *testing.T) {
	ctx := context.Background()
	d, c := fakeDeployments(t, 0)
	pool := PoolRef{Namespace: "team-a", Name: "default"}
	key := client.ObjectKey{Namespace: pool.Namespace, Name: ServiceAccountName(pool)}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "keep", UID: "keep-uid"}
	stale := metav1.OwnerReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: RunnerClusterRole, UID: "old-uid"}
	// a Secret from before owner references, with another owner and a stale anchor
	creds, err := NewCredentials(certHosts(pool), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
		OwnerReferences: []metav1.OwnerReference{other, stale}}, Data: creds}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := d.Ensure(ctx, pool); err != nil {
			t.Fatal(err)
		}
	}
	want := metav1.OwnerReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: RunnerClusterRole, UID: "anchor-uid"}
	got := map[string][]metav1.OwnerReference{}
	for kind, obj := range map[string]client.Object{"ServiceAccount": &corev1.ServiceAccount{}, "RoleBinding": &rbacv1.RoleBinding{},
		"Secret": &corev1.Secret{}, "Service": &corev1.Service{}, "Deployment": &appsv1.Deployment{}} {
		if err := c.Get(ctx, key, obj); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		got[kind] = obj.GetOwnerReferences()
	}
	wantAll := map[string][]metav1.OwnerReference{"ServiceAccount": {want}, "RoleBinding": {want}, "Secret": {other, want},
		"Service": {want}, "Deployment": {want}}
	if diff := cmp.Diff(wantAll, got); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}
	if err := c.Delete(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: RunnerClusterRole}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Ensure(ctx, PoolRef{Namespace: "team-a", Name: "other"}); err == nil {
		t.Error("a runner was made without its owner, which nothing would then remove")
	}
}

// TestScaleToZero: a runner that no run used for the idle TTL is scaled to zero; one with
// a run in flight, or stamped recently by another replica of the controller, is not; the
// next run scales it up again and waits for its pod.
func TestScaleToZero(t *testing.T) {
	ctx := context.Background()
	readyPoll = 10 * time.Millisecond
	const ttl = 10 * time.Minute
	d, c := fakeDeployments(t, ttl)
	idle, busy, shared := PoolRef{Namespace: "team-a", Name: "idle"}, PoolRef{Namespace: "team-a", Name: "busy"}, PoolRef{Namespace: "team-b", Name: "default"}
	for _, p := range []PoolRef{idle, busy, shared} {
		if _, err := d.Ensure(ctx, p); err != nil {
			t.Fatal(err)
		}
		setAvailable(t, c, p, 1)
		if _, err := d.Launch(ctx, p); err != nil {
			t.Fatalf("launch %s: %v", p, err)
		}
	}
	d.end(d.state(idle))
	d.end(d.state(shared)) // busy keeps its run in flight
	now := time.Now()
	scaled, err := d.ReapOnce(ctx, now.Add(ttl/2))
	if err != nil || len(scaled) != 0 {
		t.Fatalf("within the TTL: scaled %v, %v", scaled, err)
	}
	// another replica used shared's runner since: its stamp is recent
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: shared.Namespace, Name: ServiceAccountName(shared)}, dep); err != nil {
		t.Fatal(err)
	}
	stampLastUse(dep, now.Add(ttl))
	if err := c.Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	scaled, err = d.ReapOnce(ctx, now.Add(ttl+time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]PoolRef{idle}, scaled); diff != "" {
		t.Errorf("scaled to zero (-want +got):\n%s", diff)
	}
	got := map[string]int32{"idle": replicas(t, c, idle), "busy": replicas(t, c, busy), "shared": replicas(t, c, shared)}
	if diff := cmp.Diff(map[string]int32{"idle": 0, "busy": 1, "shared": 1}, got); diff != "" {
		t.Errorf("replicas (-want +got):\n%s", diff)
	}
	if stamp := lastUse(getDeployment(t, c, busy)); !stamp.After(now.Add(ttl)) {
		t.Errorf("the busy runner was not stamped as used for the other replicas: %s", stamp)
	}

	// the next run scales idle's runner up, and waits for its pod
	setAvailable(t, c, idle, 0)
	go func() {
		time.Sleep(50 * time.Millisecond)
		setAvailable(t, c, idle, 1)
	}()
	d.ReadyTimeout = 10 * time.Second
	if _, err := d.Launch(ctx, idle); err != nil {
		t.Fatalf("launch after scale to zero: %v", err)
	}
	if r := replicas(t, c, idle); r != 1 {
		t.Errorf("after a run, %d replicas, want 1", r)
	}
}

// TestLaunchWaitsForReady: a runner that never becomes ready fails the run, naming its
// Deployment, after ReadyTimeout.
func TestLaunchWaitsForReady(t *testing.T) {
	readyPoll = 10 * time.Millisecond
	d, _ := fakeDeployments(t, time.Minute)
	_, err := d.Launch(context.Background(), PoolRef{Namespace: "team-a", Name: "slow"})
	if err == nil || !strings.Contains(err.Error(), "not ready yet: Deployment team-a/terraplane-runner-slow") {
		t.Errorf("Launch = %v, want not ready yet", err)
	}
}

func getDeployment(t *testing.T, c client.Client, pool PoolRef) *appsv1.Deployment {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: pool.Namespace, Name: ServiceAccountName(pool)}, dep); err != nil {
		t.Error(err)
	}
	return dep
}

// setAvailable sets the available replicas of pool's runner Deployment, as the
// Deployment controller would, and gives its Service a cluster IP.
func setAvailable(t *testing.T, c client.Client, pool PoolRef, n int32) {
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		dep := getDeployment(t, c, pool)
		dep.Status.AvailableReplicas = n
		return c.Status().Update(ctx, dep)
	})
	if err != nil {
		t.Error(err)
	}
	svc := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: pool.Namespace, Name: ServiceAccountName(pool)}, svc); err != nil {
		t.Error(err)
		return
	}
	if svc.Spec.ClusterIP == "" {
		svc.Spec.ClusterIP = "10.0.0.1"
		if err := c.Update(ctx, svc); err != nil {
			t.Error(err)
		}
	}
}

// TestActivityKeepsNoRunnerUp: asking what a workspace's terraform does goes to the pool's
// runner only when this controller already has it, counts no run (a runner asked would
// otherwise never go idle), and starts none.
func TestActivityKeepsNoRunnerUp(t *testing.T) {
	runs := &fakeRuns{activity: engine.Activity{Verb: "apply"}}
	c, _ := serve(t, runs, "the-token")
	d := &Deployments{IdleTTL: time.Minute} // no client of the cluster: a Launch would fail
	p := &Pools{Launcher: d}
	ws := engine.Workspace{ID: "w", BackendConfig: map[string]string{"namespace": "team-a"}}
	ctx := context.Background()
	if got, err := p.Activity(ctx, ws); err != nil || got.Running() {
		t.Fatalf("no runner up: %+v, %v; want nothing and no error", got, err)
	}
	st := d.state(PoolOf(ws))
	st.client = c
	got, err := p.Activity(ctx, ws)
	if err != nil || got.Verb != "apply" {
		t.Fatalf("runner up: %+v, %v; want its apply", got, err)
	}
	if st.inflight != 0 {
		t.Errorf("%d runs counted in flight after asking for the activity, want 0", st.inflight)
	}
}

// TestDeploymentPoolLimit: a namespace runs at most MaxPoolsPerNamespace runner
// Deployments scaled up; one more pool is refused with ReasonPoolLimit, naming the pools
// that run, until one of them is scaled to zero. Its own runner, and other namespaces'
// runners, do not count.
func TestDeploymentPoolLimit(t *testing.T) {
	ctx := context.Background()
	d, c := fakeDeployments(t, time.Minute)
	d.MaxPoolsPerNamespace = 2
	a, b, third := PoolRef{Namespace: "team", Name: "a"}, PoolRef{Namespace: "team", Name: "b"}, PoolRef{Namespace: "team", Name: "c"}
	for _, p := range []PoolRef{a, b, {Namespace: "other", Name: "x"}} {
		if _, err := d.Ensure(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []PoolRef{a, b} {
		if err := d.admit(ctx, p); err != nil {
			t.Errorf("pool %s, running already, refused: %v", p.Name, err)
		}
	}
	err := d.admit(ctx, third)
	if u, ok := resource.AsUserError(err); !ok || u.Reason != ReasonPoolLimit || !strings.Contains(u.Message, "(a, b)") || !strings.Contains(u.Message, "no run for 1m0s") {
		t.Fatalf("a third pool: %v; want %s naming a and b and when one stops", err, ReasonPoolLimit)
	}
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: ServiceAccountName(a)}, dep); err != nil {
		t.Fatal(err)
	}
	dep.Spec.Replicas = ptr.To[int32](0)
	if err := c.Update(ctx, dep); err != nil {
		t.Fatal(err)
	}
	if err := d.admit(ctx, third); err != nil {
		t.Errorf("a third pool once a is scaled to zero: %v", err)
	}
	d.MaxPoolsPerNamespace = -1
	if _, err := d.Ensure(ctx, third); err != nil {
		t.Fatal(err)
	}
	if err := d.admit(ctx, PoolRef{Namespace: "team", Name: "d"}); err != nil {
		t.Errorf("no cap: %v", err)
	}
}
