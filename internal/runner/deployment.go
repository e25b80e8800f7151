package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"terraplane.io/terraplane/internal/engine"
)

// Deployments launches each pool's runner as a Deployment in the pool's namespace, with
// the pool's ServiceAccount, behind a Service: the in-cluster form of Processes. The
// controller makes the runner's credentials (a Secret in the pool's namespace: the token
// it presents, and the runner's certificate, which it pins) and talks to it over TLS.
// Whoever may read Secrets in the pool's namespace may therefore act as the pool, which
// reaches no more than that namespace's Secrets and Leases.
//
// Every object it makes is owned by the ClusterRole RunnerClusterRole (the anchor): when
// that role is deleted (the chart's uninstall, or a switch back to in-process runs), the
// garbage collector removes them all. A runner no run has used for IdleTTL is scaled to
// zero (Reap), and scaled up again by the next Launch of its pool.
type Deployments struct {
	// Client creates the runners' objects, in the pools' namespaces only.
	Client client.Client
	// Identities give the pools their ServiceAccounts (no token: the pod has its own).
	Identities *Identities
	// Pod says what each runner's pod runs.
	Pod PodSpec
	// OnRun is told about every terraform command a runner reports.
	OnRun func(engine.Run)
	// OnCall is told about every run sent to a runner, with its pool.
	OnCall func(PoolRef, Call)
	// IdleTTL is how long a runner may go without a run before Reap scales it to zero;
	// 0 never does.
	IdleTTL time.Duration
	// MaxPoolsPerNamespace caps the runners one namespace runs at once (Deployments
	// scaled up); 0 means DefaultMaxPoolsPerNamespace, less than 0 no cap.
	MaxPoolsPerNamespace int
	// ReadyTimeout is how long Launch waits for a runner to have a ready replica
	// (DefaultReadyTimeout when 0).
	ReadyTimeout time.Duration
	// Namespaces are where Reap looks for runner Deployments; empty means every namespace.
	Namespaces []string
	// Log hears of the runners scaled to zero, and of what Reap could not do.
	Log logr.Logger

	mu    sync.Mutex
	pools map[PoolRef]*poolState
	since time.Time // when Reap started: no runner counts as idle for longer
}

// DefaultReadyTimeout is how long Launch waits for a runner's pod to be ready, by default:
// a pod scaled up from zero, on a node that has the image, is ready in seconds.
const DefaultReadyTimeout = 3 * time.Minute

// readyPoll is how often Launch looks at a Deployment it waits for.
var readyPoll = 2 * time.Second

// Launch returns a client of pool's runner once its Deployment has a ready replica,
// making (or updating, or scaling up) the runner's objects first. The caller makes one
// run on the client: its end, which OnCall hears of, counts as the pool's last use.
func (d *Deployments) Launch(ctx context.Context, pool PoolRef) (*Client, error) {
	st := d.state(pool)
	st.launch.Lock()
	defer st.launch.Unlock()
	if c := d.fresh(st, time.Now()); c != nil {
		return c, nil
	}
	if err := d.admit(ctx, pool); err != nil {
		return nil, err
	}
	creds, err := d.Ensure(ctx, pool)
	if err != nil {
		return nil, err
	}
	if err := d.waitReady(ctx, pool); err != nil {
		return nil, err
	}
	ip, err := d.serviceIP(ctx, pool)
	if err != nil {
		return nil, err
	}
	c, err := NewTLSClient(fmt.Sprintf("https://%s", net.JoinHostPort(ip, strconv.Itoa(RunnerPort))), creds[CertKey], string(creds[TokenKey]), d.OnRun)
	if err != nil {
		return nil, err
	}
	c.verifyAs(serviceHost(pool))
	c.OnCall = func(call Call) {
		d.end(st)
		if d.OnCall != nil {
			d.OnCall(pool, call)
		}
	}
	d.mu.Lock()
	st.client, st.stamped = c, time.Now()
	st.inflight++
	d.mu.Unlock()
	return c, nil
}

// admit refuses to scale up pool's runner while its namespace runs as many other runners
// (Deployments with replicas) as it may: the resource is Synced=False (ReasonPoolLimit)
// until one is scaled to zero. Two controllers starting two pools at once may both pass.
func (d *Deployments) admit(ctx context.Context, pool PoolRef) error {
	limit := maxPoolsOr(d.MaxPoolsPerNamespace)
	if limit < 0 {
		return nil
	}
	deps, err := d.runners(ctx, pool.Namespace)
	if err != nil {
		return err
	}
	var others []string
	for i := range deps {
		if name := deps[i].Labels[PoolLabel]; name != "" && name != pool.Name && scaledUp(&deps[i]) {
			others = append(others, name)
		}
	}
	return poolLimit(pool, others, limit, d.IdleTTL)
}

// Running is pool's client when this controller has one, counting no run.
func (d *Deployments) Running(pool PoolRef) *Client {
	st := d.state(pool)
	d.mu.Lock()
	defer d.mu.Unlock()
	return st.client
}

// Forget drops pool's client: the next Launch looks at its runner again.
func (d *Deployments) Forget(pool PoolRef) {
	st := d.state(pool)
	d.mu.Lock()
	defer d.mu.Unlock()
	st.client = nil
}

// Stop forgets every runner; their Deployments stay, for the next controller.
func (d *Deployments) Stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, st := range d.pools {
		st.client = nil
	}
}

// Ensure makes pool's runner: its ServiceAccount and binding, its credentials Secret,
// its Service and its Deployment (at one replica, stamped as used now), each owned by
// the anchor, and returns the credentials.
func (d *Deployments) Ensure(ctx context.Context, pool PoolRef) (map[string][]byte, error) {
	if err := d.Identities.Account(ctx, pool); err != nil {
		return nil, err
	}
	owner, err := d.anchor(ctx)
	if err != nil {
		return nil, err
	}
	key := client.ObjectKey{Namespace: pool.Namespace, Name: ServiceAccountName(pool)}
	if err := d.own(ctx, key, &corev1.ServiceAccount{}, owner); err != nil {
		return nil, fmt.Errorf("runner service account: %w", err)
	}
	if err := d.own(ctx, key, &rbacv1.RoleBinding{}, owner); err != nil {
		return nil, fmt.Errorf("runner role binding: %w", err)
	}
	creds, err := d.credentials(ctx, pool, owner)
	if err != nil {
		return nil, err
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: pool.Namespace, Name: ServiceAccountName(pool)}}
	if _, err := controllerutil.CreateOrUpdate(ctx, d.Client, svc, func() error {
		setService(svc, pool)
		setOwner(svc, owner)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("runner service: %w", err)
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: pool.Namespace, Name: ServiceAccountName(pool)}}
	sum := sha256.Sum256(creds[CertKey])
	now := time.Now()
	if _, err := controllerutil.CreateOrUpdate(ctx, d.Client, dep, func() error {
		setDeployment(dep, pool, d.Pod, hex.EncodeToString(sum[:8]))
		setOwner(dep, owner)
		stampLastUse(dep, now)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("runner deployment: %w", err)
	}
	return creds, nil
}

// credentials reads pool's credentials Secret, making it (again) when it is missing or
// its certificate is about to expire.
func (d *Deployments) credentials(ctx context.Context, pool PoolRef, owner metav1.OwnerReference) (map[string][]byte, error) {
	hosts := certHosts(pool)
	sec := &corev1.Secret{}
	err := d.Client.Get(ctx, client.ObjectKey{Namespace: pool.Namespace, Name: ServiceAccountName(pool)}, sec)
	switch {
	case err == nil && usable(sec.Data, hosts, time.Now()):
		if setOwner(sec, owner) {
			if err := d.Client.Update(ctx, sec); err != nil {
				return nil, fmt.Errorf("runner credentials: %w", err)
			}
		}
		return sec.Data, nil
	case err != nil && !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("runner credentials: %w", err)
	}
	data, err := NewCredentials(hosts, time.Now())
	if err != nil {
		return nil, err
	}
	if sec.UID == "" {
		sec = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: pool.Namespace, Name: ServiceAccountName(pool), Labels: poolLabels(pool)},
			Type: corev1.SecretTypeOpaque, Data: data}
		setOwner(sec, owner)
		err = d.Client.Create(ctx, sec)
	} else {
		sec.Data = data
		setOwner(sec, owner)
		err = d.Client.Update(ctx, sec)
	}
	if err != nil {
		return nil, fmt.Errorf("runner credentials: %w", err)
	}
	return data, nil
}

// serviceIP is the cluster IP of pool's runner Service. The controller dials it rather
// than the Service's DNS name, which a cluster without cluster DNS cannot resolve, and
// checks the runner's certificate for that name all the same.
func (d *Deployments) serviceIP(ctx context.Context, pool PoolRef) (string, error) {
	svc := &corev1.Service{}
	if err := d.Client.Get(ctx, client.ObjectKey{Namespace: pool.Namespace, Name: ServiceAccountName(pool)}, svc); err != nil {
		return "", fmt.Errorf("runner service: %w", err)
	}
	if ip := svc.Spec.ClusterIP; ip != "" && ip != corev1.ClusterIPNone {
		return ip, nil
	}
	return "", fmt.Errorf("runner service %s/%s has no cluster IP yet", svc.Namespace, svc.Name)
}

// waitReady waits, up to ReadyTimeout, until pool's runner has a replica that serves.
func (d *Deployments) waitReady(ctx context.Context, pool PoolRef) error {
	timeout := d.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	deadline := time.Now().Add(timeout)
	for {
		err := d.ready(ctx, pool)
		if err == nil || time.Now().Add(readyPoll).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", err, ctx.Err())
		case <-time.After(readyPoll):
		}
	}
}

// ready says whether pool's runner has a replica that serves.
func (d *Deployments) ready(ctx context.Context, pool PoolRef) error {
	dep := &appsv1.Deployment{}
	if err := d.Client.Get(ctx, client.ObjectKey{Namespace: pool.Namespace, Name: ServiceAccountName(pool)}, dep); err != nil {
		return fmt.Errorf("runner deployment: %w", err)
	}
	if dep.Status.AvailableReplicas < 1 {
		return fmt.Errorf("the runner of pool %s is not ready yet: Deployment %s/%s has no available replica", pool, dep.Namespace, dep.Name)
	}
	return nil
}
