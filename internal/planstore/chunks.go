package planstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"terraplane.io/terraplane/internal/resource"
)

// A saved plan file is kept in chunks, as terraform's state is by some backends: a set of
// Secrets "<plan Secret>-<set>-<i>", where set is the start of the file's SHA-256, all
// labelled with it and owned by the resource. The set is written first; only then does
// the plan Secret's meta name it (chunkIndex), and only after that are older sets
// deleted. So a reader that follows the meta never finds a set half written, and one
// that finds a set gone or altered (hash mismatch) plans again.

const (
	// planChunkBytes is the most of a plan file one Secret holds: under the 1 MiB of
	// data a Secret may hold and, in base64, under the API server's request limit (3 MiB).
	planChunkBytes = 960 << 10
	// planMaxChunks caps the Secrets of one saved plan: 7.5 MiB of plan file in all.
	planMaxChunks = 8
	// planIndexBytes is the most the plan Secret itself holds: the plan's text and meta.
	planIndexBytes = 960 << 10
	// planChunkLabel is the resource.PlanLabel value of chunk Secrets.
	planChunkLabel = "chunk"
	// planSetLabel names the set a chunk Secret belongs to.
	planSetLabel = "terraplane.io/plan-set"
	// planChunkKey is the key of a chunk Secret's data.
	planChunkKey = "chunk"
)

// errPlanIncomplete says a chunk set is missing a chunk or does not hash to its index.
var errPlanIncomplete = errors.New("the saved plan's chunks are incomplete or altered")

// chunkIndex is what the plan Secret's meta records of the chunk set holding the file.
type chunkIndex struct {
	SHA256 string `json:"sha256"`
	Size   int    `json:"size"`
	Chunks int    `json:"chunks"`
}

// set is the name of the chunk set: the start of the file's hash.
func (c chunkIndex) set() string { return c.SHA256[:16] }

// chunkName is the name of chunk i of the set.
func (c chunkIndex) chunkName(mg resource.Managed, i int) string {
	return resource.PlanSecretName(mg) + "-" + c.set() + "-" + strconv.Itoa(i)
}

// splitPlan cuts file into chunks of at most size bytes and indexes them.
func splitPlan(file []byte, size int) ([][]byte, chunkIndex) {
	sum := sha256.Sum256(file)
	var chunks [][]byte
	for rest := file; len(rest) > 0; {
		n := min(size, len(rest))
		chunks = append(chunks, rest[:n])
		rest = rest[n:]
	}
	return chunks, chunkIndex{SHA256: hex.EncodeToString(sum[:]), Size: len(file), Chunks: len(chunks)}
}

// joinPlan puts chunks back together as idx says; errPlanIncomplete when one is missing
// (nil) or the whole is not the file idx names.
func joinPlan(chunks [][]byte, idx chunkIndex) ([]byte, error) {
	if len(chunks) != idx.Chunks {
		return nil, errPlanIncomplete
	}
	file := make([]byte, 0, idx.Size)
	for _, c := range chunks {
		if c == nil {
			return nil, errPlanIncomplete
		}
		file = append(file, c...)
	}
	sum := sha256.Sum256(file)
	if len(file) != idx.Size || hex.EncodeToString(sum[:]) != idx.SHA256 {
		return nil, errPlanIncomplete
	}
	return file, nil
}

// writeChunks makes the Secrets of idx's set hold chunks.
func (s *Store) writeChunks(ctx context.Context, mg resource.Managed, idx chunkIndex, chunks [][]byte) error {
	for i, c := range chunks {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: idx.chunkName(mg, i), Namespace: mg.GetNamespace(),
			Labels: map[string]string{resource.PlanLabel: planChunkLabel, resource.ManagedLabel: string(mg.GetUID()), planSetLabel: idx.set()}},
			Data: map[string][]byte{planChunkKey: c}}
		if err := controllerutil.SetOwnerReference(mg, sec, s.client.Scheme()); err != nil {
			return fmt.Errorf("keep plan: %w", err)
		}
		err := s.client.Create(ctx, sec)
		if apierrors.IsAlreadyExists(err) {
			err = s.rewriteChunk(ctx, sec)
		}
		if err != nil {
			return fmt.Errorf("keep plan: chunk %d of %d: %w", i+1, len(chunks), err)
		}
	}
	return nil
}

// rewriteChunk makes an existing chunk Secret hold want's data, as a set named by the
// same hash should already.
func (s *Store) rewriteChunk(ctx context.Context, want *corev1.Secret) error {
	sec := &corev1.Secret{}
	if err := s.reader.Get(ctx, client.ObjectKeyFromObject(want), sec); err != nil {
		return err
	}
	if bytes.Equal(sec.Data[planChunkKey], want.Data[planChunkKey]) {
		return nil
	}
	sec.Data = want.Data
	return s.client.Update(ctx, sec)
}

// readChunks reads the file idx names; errPlanIncomplete when the set is not whole.
func (s *Store) readChunks(ctx context.Context, mg resource.Managed, idx chunkIndex) ([]byte, error) {
	if idx.Chunks > planMaxChunks || len(idx.SHA256) != sha256.Size*2 {
		return nil, errPlanIncomplete
	}
	chunks := make([][]byte, idx.Chunks)
	for i := range chunks {
		sec := &corev1.Secret{}
		err := s.reader.Get(ctx, client.ObjectKey{Namespace: mg.GetNamespace(), Name: idx.chunkName(mg, i)}, sec)
		if apierrors.IsNotFound(err) {
			return nil, errPlanIncomplete
		}
		if err != nil {
			return nil, fmt.Errorf("read saved plan: %w", err)
		}
		if chunks[i] = sec.Data[planChunkKey]; chunks[i] == nil {
			chunks[i] = []byte{}
		}
	}
	return joinPlan(chunks, idx)
}

// dropIndexed deletes the chunk set that meta, a plan Secret's former meta, names.
func (s *Store) dropIndexed(ctx context.Context, mg resource.Managed, meta []byte) error {
	var m planMeta
	if len(meta) == 0 || json.Unmarshal(meta, &m) != nil || m.File == nil || len(m.File.SHA256) < 16 {
		return nil
	}
	for i := range min(m.File.Chunks, planMaxChunks) {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: m.File.chunkName(mg, i), Namespace: mg.GetNamespace()}}
		if err := s.client.Delete(ctx, sec); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("drop saved plan: %w", err)
		}
	}
	return nil
}

// dropChunks deletes mg's chunk Secrets but those of set keep ("" deletes them all); it
// lists them, so it finds those a failed save left behind too.
func (s *Store) dropChunks(ctx context.Context, mg resource.Managed, keep string) error {
	list := &corev1.SecretList{}
	if err := s.reader.List(ctx, list, client.InNamespace(mg.GetNamespace()),
		client.MatchingLabels{resource.PlanLabel: planChunkLabel, resource.ManagedLabel: string(mg.GetUID())}); err != nil {
		return fmt.Errorf("drop old saved plans: %w", err)
	}
	for i := range list.Items {
		sec := &list.Items[i]
		if keep != "" && sec.Labels[planSetLabel] == keep {
			continue
		}
		if err := s.client.Delete(ctx, sec); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("drop old saved plans: %w", err)
		}
	}
	return nil
}
