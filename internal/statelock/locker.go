package statelock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/holder"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Locker takes the state locks of this process's terraform runs in place of terraform
// (which then runs with -lock=false), so that each lock names its holder precisely, and
// releases a lock only once its holder is provably gone.
type Locker struct {
	client client.Client
	reader client.Reader
	self   holder.Holder
	hold   time.Duration
	grace  time.Duration
}

// NewLocker returns a locker of this process with an id of its own (tests run several
// controllers in one process): c writes the Leases, reader reads them uncached. A lock
// expires grace after the deadline of the command it is taken for (the time a cancelled
// terraform gets to stop, and a margin), or hold after it is taken when the command has
// no deadline.
func NewLocker(c client.Client, reader client.Reader, hold, grace time.Duration) *Locker {
	return &Locker{client: c, reader: reader, self: holder.New(), hold: hold, grace: grace}
}

// HolderID is the id this locker's locks name their holder by.
func (l *Locker) HolderID() string { return l.self.ID }

// Labels terraform's kubernetes backend puts on the state lock Lease it creates.
var leaseLabels = func(suffix string) map[string]string {
	return map[string]string{"tfstate": "true", "tfstateWorkspace": "default", "tfstateSecretSuffix": suffix, "app.kubernetes.io/managed-by": "terraform"}
}

// LeaseKey is the state lock Lease of the kubernetes backend's state in namespace with
// secret_suffix suffix.
func LeaseKey(namespace, suffix string) client.ObjectKey {
	return client.ObjectKey{Namespace: namespace, Name: "lock-" + engine.StateSecret(suffix)}
}

// Lock takes the state lock in Lease key for operation (a terraform verb). unlock
// releases it, even after ctx ends, and is told whether the outcome of the command it
// was taken for is settled (terraform saved what it made, or failed before making
// anything). A lock taken for a create (create) also records the create on the lock
// (common.CreatePendingAnnotation) in the same write, and drops it only with a settled
// release: a lock left with that record, by a run cut off or released unsettled, tells
// the next run that the create may have made what terraform never saved (ClearStale). A
// workspace's first lock is kept on its state Secret, taken in the write that seeds its
// empty state; later ones on the Lease. A lock held by another is a *HeldError, or a
// *StaleLockError when no Terraplane process holds it.
func (l *Locker) Lock(ctx context.Context, key client.ObjectKey, suffix, operation string, create bool) (unlock func(settled bool), err error) {
	release, _, err := l.lock(ctx, key, suffix, operation, create)
	if err != nil {
		return nil, err
	}
	return func(settled bool) { release(settled, nil) }, nil
}

// lock is Lock, and the state Secret as the API server returned it, as JSON, when the
// lock was taken in the write that seeded it (seeded). Its unlock may be told the state
// Secret as the API server last returned it (state).
func (l *Locker) lock(ctx context.Context, key client.ObjectKey, suffix, operation string, create bool) (unlock func(settled bool, state []byte), seeded []byte, err error) {
	info, err := l.newLockInfo(operation, l.expiry(ctx, time.Now()))
	if err != nil {
		return nil, nil, err
	}
	rs, err := readRecords(ctx, l.reader, key)
	if err != nil {
		return nil, nil, err
	}
	rec := rs.lock()
	if rec == nil {
		return l.lockFirst(ctx, key, suffix, operation, create, rs.state != nil, info)
	}
	if held := rec.held(); held != nil {
		return nil, nil, l.heldError(*held)
	}
	before := rec.DeepCopyObject().(client.Object)
	stamp(*rec, info, create)
	if err := rec.save(ctx, l.client, before); err != nil {
		if apierrors.IsConflict(err) {
			return l.lock(ctx, key, suffix, operation, create)
		}
		return nil, nil, fmt.Errorf("take state lock %s: %w", key.Name, err)
	}
	return l.unlocker(*rec, info.ID, create), nil, nil
}

// lockFirst takes a lock nothing keeps yet, with info: a workspace without state gets its
// empty state and the lock in one write to its state Secret, which it returns as JSON;
// one with a state gets its Lease.
func (l *Locker) lockFirst(ctx context.Context, key client.ObjectKey, suffix, operation string, create, stateExists bool, info LockInfo) (func(bool, []byte), []byte, error) {
	var obj client.Object = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: leaseLabels(suffix)}}
	if !stateExists {
		secret, err := newStateSecret(stateKey(key), suffix)
		if err != nil {
			return nil, nil, err
		}
		obj = secret
	}
	stamp(record{obj}, info, create)
	if err := l.client.Create(ctx, obj); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return l.lock(ctx, key, suffix, operation, create) // taken meanwhile: say by whom
		}
		return nil, nil, fmt.Errorf("take state lock %s: %w", obj.GetName(), err)
	}
	var seeded []byte
	if secret, ok := obj.(*corev1.Secret); ok {
		seeded = secretJSON(secret)
		meta := secretMeta()
		secret.ObjectMeta.DeepCopyInto(&meta.ObjectMeta)
		obj = meta
	}
	return l.unlocker(record{obj}, info.ID, create), seeded, nil
}

// secretJSON is secret as the API server writes it in a reply, with its kind; nil when
// it has no resource version to write over it with, as a client that reads it needs.
func secretJSON(secret *corev1.Secret) []byte {
	if secret.ResourceVersion == "" {
		return nil
	}
	s := secret.DeepCopy()
	s.TypeMeta = metav1.TypeMeta{Kind: "Secret", APIVersion: "v1"}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	return raw
}

// expiry is when no command run under ctx, locking at now, can still run: ctx's deadline
// and the grace after it, or the locker's hold from now for a command without one.
func (l *Locker) expiry(ctx context.Context, now time.Time) time.Time {
	if deadline, ok := ctx.Deadline(); ok {
		return deadline.Add(l.grace).UTC()
	}
	return now.Add(l.hold).UTC()
}

// newLockInfo is a lock of this process for operation, expiring at expires, in
// terraform's format.
func (l *Locker) newLockInfo(operation string, expires time.Time) (LockInfo, error) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return LockInfo{}, fmt.Errorf("lock id: %w", err)
	}
	now := time.Now().UTC()
	h := l.self
	h.Expires = expires
	info, err := json.Marshal(h)
	if err != nil {
		return LockInfo{}, fmt.Errorf("lock holder: %w", err)
	}
	return LockInfo{ID: hex.EncodeToString(id), Operation: operation, Info: string(info), Who: h.String(), Version: "terraplane", Created: now}, nil
}

// unlocker releases the lock id on rec, which was written last as rec; a lock taken for
// a create (create) drops the create's record too once its outcome is settled. A release
// that fails (the API server out of reach) is tried again in the background until it
// succeeds or the lock is no longer this process's, so that a replica cut off for a
// while does not keep others waiting for the lock's deadline. A lock kept on the state
// Secret is freed first as state says the Secret is (as the API server last returned
// it), and read again only when that is not its latest.
func (l *Locker) unlocker(rec record, id string, create bool) func(settled bool, state []byte) {
	_, onLease := rec.Object.(*coordinationv1.Lease)
	return func(settled bool, state []byte) {
		settles := create && settled
		release := func(first bool) bool {
			ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
			defer cancel()
			// A Lease is most likely as this process wrote it; a state Secret terraform
			// has written since, as state may say.
			if first && onLease && free(ctx, l.client, record{rec.DeepCopyObject().(client.Object)}, settles) == nil {
				return true
			}
			if first && !onLease {
				if known := stateRecord(state, rec); known != nil && known.heldBy(id) && free(ctx, l.client, *known, settles) == nil {
					return true
				}
			}
			current, err := rec.reread(ctx, l.reader) // written since: free it only if still ours
			if err != nil {
				return false
			}
			if current == nil {
				return true
			}
			if !current.heldBy(id) {
				return true
			}
			return free(ctx, l.client, *current, settles) == nil
		}
		if release(true) {
			return
		}
		go func() {
			for deadline := time.Now().Add(l.hold); time.Now().Before(deadline); {
				time.Sleep(unlockRetry)
				if release(false) {
					return
				}
			}
		}()
	}
}

// How long one release of a lock may take, and how often a failed one is tried again.
const (
	unlockTimeout = 30 * time.Second
	unlockRetry   = 5 * time.Second
)

// heldError says who holds a lock this process did not get.
func (l *Locker) heldError(held LockInfo) error {
	if h := held.Holder(); h != nil {
		return &HeldError{Lock: held, Holder: *h}
	}
	return &StaleLockError{Lock: held}
}

// Released is what ClearStale found on a state lock.
type Released struct {
	// Age is how long the lock it released had been held; 0 when it released none.
	Age time.Duration
	// CreatePending: the Lease records a create whose outcome is not known (its run was
	// cut off, or ended without knowing what it made), and the caller said the resource
	// does not record it yet. The caller records it, then calls again with recorded set,
	// which drops it from the Lease.
	CreatePending bool
}

// ClearStale releases the state lock in Lease key when its holder is provably gone: a
// lock of this process when busy is false (no run of its own is in flight), one whose
// deadline has passed, one of a process no longer running on this machine, or one of a
// pod that is gone. A create recorded on the Lease stays there, and is reported, until
// the caller says (recorded) that the resource records it. A lock a live run may hold is
// a *HeldError, and one Terraplane did not take a *StaleLockError.
func (l *Locker) ClearStale(ctx context.Context, key client.ObjectKey, busy, recorded bool) (Released, error) {
	rs, err := readRecords(ctx, l.reader, key)
	if err != nil {
		return Released{}, err
	}
	rec := rs.lock()
	if rec == nil {
		return Released{}, nil
	}
	pending, held := rec.pending(), rec.held()
	if held != nil {
		if v := judge(*held, l.self, busy, time.Now(), l.gone(ctx)); v != release {
			return Released{}, l.heldError(*held)
		}
	} else if !pending || !recorded {
		return Released{CreatePending: pending}, nil // free: nothing to write
	}
	if err := free(ctx, l.client, *rec, recorded); err != nil {
		return Released{}, err
	}
	out := Released{CreatePending: pending && !recorded}
	if held != nil {
		out.Age = max(time.Since(held.Created), time.Nanosecond)
	}
	return out, nil
}

// verdict is what to do with a held lock.
type verdict int

const (
	// wait: a live run may hold it.
	wait verdict = iota
	// release: its holder is provably gone.
	release
	// foreign: no Terraplane process holds it; a person decides.
	foreign
)

// judge decides about lock, seen by self; gone says whether another holder's process is
// provably gone.
func judge(lock LockInfo, self holder.Holder, busy bool, now time.Time, gone func(holder.Holder) bool) verdict {
	h := lock.Holder()
	switch {
	case h == nil:
		return foreign
	case h.ID == self.ID && busy:
		return wait
	case h.ID == self.ID:
		return release // a run of this process ended without releasing it
	case !h.Expires.IsZero() && now.After(h.Expires):
		return release // no terraform command of it can still run
	case gone(*h):
		return release
	}
	return wait
}

// gone says whether holder h, not this process, is provably gone: an earlier container of
// this pod, a process no longer running in this process table (once the processes its
// runs left are stopped), or a pod that no longer exists.
func (l *Locker) gone(ctx context.Context) func(holder.Holder) bool {
	return func(h holder.Holder) bool {
		switch {
		case h.SameProcessTable(l.self):
			// what its runs left running (a provisioner shell) stops first
			return !h.Running() && holder.StopLeftovers(h.ID, holder.LeftoverWait)
		case h.Pod != "" && h.Pod == l.self.Pod:
			return true // an earlier container of this pod: this one replaced it
		case h.Pod != "" && h.PodName != "":
			var pod corev1.Pod
			err := l.reader.Get(ctx, client.ObjectKey{Namespace: h.PodNamespace, Name: h.PodName}, &pod)
			return apierrors.IsNotFound(err) || err == nil && string(pod.UID) != h.Pod
		}
		return false
	}
}

// LockState is Lock for the state a workspace keeps in the kubernetes backend, named by
// its backend settings (namespace and secret_suffix).
func (l *Locker) LockState(ctx context.Context, backend map[string]string, verb string, create bool) (func(settled bool, state []byte), []byte, error) {
	return l.lock(ctx, LeaseKey(backend["namespace"], backend["secret_suffix"]), backend["secret_suffix"], verb, create)
}

// StateVersion is the resource version of the state Secret a workspace keeps in the
// kubernetes backend, named by its backend settings: it changes whenever terraform
// writes the state (its locks are kept on the Lease). Empty when there is no state.
func (l *Locker) StateVersion(ctx context.Context, backend map[string]string) (string, error) {
	meta, err := getStateMeta(ctx, l.reader, stateKey(LeaseKey(backend["namespace"], backend["secret_suffix"])))
	if err != nil || meta == nil {
		return "", err
	}
	return meta.GetResourceVersion(), nil
}

var _ engine.StateVersioner = (*Locker)(nil)

// ForEngine returns the locker of an engine whose commands run at most timeout (0: the
// engine's default): a lock is held for a command's deadline, then for the time a
// cancelled terraform gets to stop and a minute more. The controller and the runners
// take locks alike.
func ForEngine(c client.Client, reader client.Reader, timeout time.Duration) *Locker {
	if timeout <= 0 {
		timeout = engine.DefaultTimeout
	}
	grace := engine.DefaultGracePeriod + time.Minute
	return NewLocker(c, reader, timeout+grace, grace)
}
