package statelock

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/engine"
)

// emptyState is the state terraform writes for a workspace that has none yet: no
// resources, a new lineage. Its terraform_version is old enough for every terraform and
// OpenTofu to read it and write it over in their own version.
const emptyState = `{"version":4,"terraform_version":"1.0.0","serial":1,"lineage":%q,"outputs":{},"resources":[],"check_results":null}`

// SeedState writes an empty state where the kubernetes backend keeps the state of the
// workspace with backend settings backend, unless a state is there already. Terraform
// takes the state lock itself, even with -lock=false, to write the first state of a
// workspace; seeding it lets every run go under the lock this process holds.
func (l *Locker) SeedState(ctx context.Context, backend map[string]string) error {
	ns, suffix := backend["namespace"], backend["secret_suffix"]
	key := client.ObjectKey{Namespace: ns, Name: engine.StateSecret(suffix)}
	var existing corev1.Secret
	err := l.reader.Get(ctx, key, &existing)
	if err == nil && len(existing.Data["tfstate"]) > 0 {
		return nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("read state %s: %w", key.Name, err)
	}
	if err == nil && existing.Name != "" {
		payload, err := newEmptyState()
		if err != nil {
			return err
		}
		existing.Data = map[string][]byte{"tfstate": payload}
		if err := l.client.Update(ctx, &existing); err != nil {
			return fmt.Errorf("write empty state %s: %w", key.Name, err)
		}
		return nil
	}
	secret, err := newStateSecret(key, suffix)
	if err != nil {
		return err
	}
	if err := l.client.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("write empty state %s: %w", key.Name, err)
	}
	return nil
}

// newStateSecret is the state Secret key of the workspace with secret_suffix suffix,
// holding an empty state, as the kubernetes backend would write it.
func newStateSecret(key client.ObjectKey, suffix string) (*corev1.Secret, error) {
	payload, err := newEmptyState()
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: leaseLabels(suffix),
		Annotations: map[string]string{"encoding": "gzip"}}, Data: map[string][]byte{"tfstate": payload}}, nil
}

// newEmptyState is an empty state with a new lineage, gzipped as the backend keeps it.
func newEmptyState() ([]byte, error) {
	u := make([]byte, 16)
	if _, err := rand.Read(u); err != nil {
		return nil, fmt.Errorf("state lineage: %w", err)
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	lineage := fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:])
	var buf bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&buf)
	if _, err := fmt.Fprintf(zw, emptyState, lineage); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// gzipWriters are gzip writers to reuse: each holds its compressor's tables, most of a
// megabyte to allocate and clear, against a few hundred bytes of state to compress.
var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(io.Discard) }}
