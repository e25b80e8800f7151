package statelock

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	common "terraplane.io/terraplane/apis/common/v1alpha1"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// record is the object a workspace's state lock is kept on: its Lease, or, until the
// workspace has a Lease, the metadata of its state Secret. A workspace's first lock is
// taken in the write that seeds its empty state, so that a first create writes one
// object less; the lock moves to the Lease at the first lock after that one is released.
type record struct{ client.Object }

// records are the two objects a workspace's lock may be kept on; either may be nil.
type records struct {
	lease *coordinationv1.Lease
	state *metav1.PartialObjectMetadata
}

// lock is the record that keeps the lock: the Lease when there is one, else the state
// Secret while it carries a lock or a create's record; nil when neither does.
func (rs records) lock() *record {
	switch {
	case rs.lease != nil:
		return &record{rs.lease}
	case rs.state != nil && keepsLock(rs.state.Annotations):
		return &record{rs.state}
	}
	return nil
}

// keepsLock says whether annotations hold a lock or a create's record.
func keepsLock(annotations map[string]string) bool {
	return annotations[common.LockInfoAnnotation] != "" || annotations[common.CreatePendingAnnotation] != ""
}

// stateKey is the state Secret of the workspace whose lock Lease is key.
func stateKey(key client.ObjectKey) client.ObjectKey {
	return client.ObjectKey{Namespace: key.Namespace, Name: strings.TrimPrefix(key.Name, "lock-")}
}

// readRecords reads the Lease key and, when there is none, its state Secret's metadata.
func readRecords(ctx context.Context, c client.Reader, key client.ObjectKey) (records, error) {
	lease, err := getLease(ctx, c, key)
	if err != nil || lease != nil {
		return records{lease: lease}, err
	}
	state, err := getStateMeta(ctx, c, stateKey(key))
	return records{state: state}, err
}

// getStateMeta reads the metadata of the state Secret key; nil when there is none.
func getStateMeta(ctx context.Context, c client.Reader, key client.ObjectKey) (*metav1.PartialObjectMetadata, error) {
	meta := secretMeta()
	if err := c.Get(ctx, key, meta); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read state %s: %w", key.Name, err)
	}
	return meta, nil
}

// secretMeta is an empty Secret's metadata, typed for the metadata client.
func secretMeta() *metav1.PartialObjectMetadata {
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return meta
}

// reread reads r's object again; nil when it is gone.
func (r record) reread(ctx context.Context, c client.Reader) (*record, error) {
	key := client.ObjectKeyFromObject(r.Object)
	var (
		obj client.Object
		err error
	)
	if _, ok := r.Object.(*coordinationv1.Lease); ok {
		var lease *coordinationv1.Lease
		if lease, err = getLease(ctx, c, key); lease != nil {
			obj = lease
		}
	} else {
		var meta *metav1.PartialObjectMetadata
		if meta, err = getStateMeta(ctx, c, key); meta != nil {
			obj = meta
		}
	}
	if err != nil || obj == nil {
		return nil, err
	}
	return &record{obj}, nil
}

// stateRecord is the state Secret rec as state (its JSON) says it is; nil when state says
// nothing of rec.
func stateRecord(state []byte, rec record) *record {
	if state == nil {
		return nil
	}
	meta := secretMeta()
	if json.Unmarshal(state, meta) != nil || meta.Name != rec.GetName() || meta.Namespace != rec.GetNamespace() || meta.ResourceVersion == "" {
		return nil
	}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return &record{meta}
}

// heldBy says whether r records the lock id.
func (r record) heldBy(id string) bool {
	held := r.held()
	return held != nil && held.ID == id
}

// held is the lock recorded on r; nil when it is free.
func (r record) held() *LockInfo {
	if lease, ok := r.Object.(*coordinationv1.Lease); ok {
		return heldBy(lease)
	}
	raw := r.GetAnnotations()[common.LockInfoAnnotation]
	if raw == "" {
		return nil
	}
	info := &LockInfo{}
	_ = json.Unmarshal([]byte(raw), info) // a lock without readable details is still held
	return info
}

// pending says whether r records a create whose outcome is not known.
func (r record) pending() bool { return r.GetAnnotations()[common.CreatePendingAnnotation] != "" }

// save writes r, changed from before, as long as nobody wrote it since: a Lease whole, a
// state Secret's metadata as a merge patch, which leaves the state it holds alone.
func (r record) save(ctx context.Context, c client.Client, before client.Object) error {
	if _, ok := r.Object.(*coordinationv1.Lease); ok {
		return c.Update(ctx, r.Object)
	}
	return c.Patch(ctx, r.Object, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// stamp records info as r's holder, and a create in flight when create is set.
func stamp(r record, info LockInfo, create bool) {
	raw, _ := json.Marshal(info)
	annotations := r.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[common.LockInfoAnnotation] = string(raw)
	if create {
		annotations[common.CreatePendingAnnotation] = info.Created.Format(time.RFC3339)
	}
	r.SetAnnotations(annotations)
	if lease, ok := r.Object.(*coordinationv1.Lease); ok {
		lease.Spec.HolderIdentity = ptr.To(info.ID)
	}
}

// free clears r's holder and its details, and the record of a create when settled.
func free(ctx context.Context, c client.Client, r record, settled bool) error {
	before := r.DeepCopyObject().(client.Object)
	annotations := r.GetAnnotations()
	delete(annotations, common.LockInfoAnnotation)
	if settled {
		delete(annotations, common.CreatePendingAnnotation)
	}
	r.SetAnnotations(annotations)
	if lease, ok := r.Object.(*coordinationv1.Lease); ok {
		lease.Spec.HolderIdentity = nil
	}
	if err := r.save(ctx, c, before); err != nil {
		return fmt.Errorf("release state lock %s: %w", r.GetName(), err)
	}
	return nil
}

// HeldOn is the lock obj keeps, a state lock Lease or a state Secret; nil when free.
func HeldOn(obj client.Object) *LockInfo { return record{obj}.held() }

// HeldIn lists the state locks held in namespace, by the name of their Lease (the lock
// of a workspace without one yet is kept on its state Secret).
func HeldIn(ctx context.Context, c client.Reader, namespace string) (map[string]LockInfo, error) {
	var leases coordinationv1.LeaseList
	if err := c.List(ctx, &leases, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list state locks: %w", err)
	}
	states := &metav1.PartialObjectMetadataList{}
	states.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := c.List(ctx, states, client.InNamespace(namespace), client.MatchingLabels{"tfstate": "true"}); err != nil {
		return nil, fmt.Errorf("list states: %w", err)
	}
	held := map[string]LockInfo{}
	for i := range states.Items {
		if info := HeldOn(&states.Items[i]); info != nil {
			held["lock-"+states.Items[i].Name] = *info
		}
	}
	for i := range leases.Items {
		if !strings.HasPrefix(leases.Items[i].Name, "lock-tfstate-") {
			continue
		}
		delete(held, leases.Items[i].Name) // a Lease keeps the lock, whatever its Secret says
		if info := heldBy(&leases.Items[i]); info != nil {
			held[leases.Items[i].Name] = *info
		}
	}
	return held, nil
}
