package planstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
)

// planKeySecret holds, per namespace, the key that plan ids hash sensitive values with.
const planKeySecret = "terraplane-plan-key"

// Store keeps a resource's saved plan while it awaits approval (it holds secret
// values in plain text, as the state does), and the text of its latest plan with
// changes. The plan's meta is in the plan Secret, and the plan file in a set of chunk
// Secrets that the meta names (see chunks.go); the text, and what the plan does, are
// in a Plan object that reviewers may read (see text.go).
type Store struct {
	client client.Client // writes
	reader client.Reader // reads, uncached: plan Secrets stay out of the cache
	keys   sync.Map      // namespace → []byte
	// ChunkBytes and MaxChunks size the chunk sets: the bytes of one chunk Secret, and how
	// many a plan may take; 0 means planChunkBytes and planMaxChunks.
	ChunkBytes, MaxChunks int
}

// New returns the plan store that writes with c and reads, uncached, with reader.
func New(c client.Client, reader client.Reader) *Store {
	return &Store{client: c, reader: reader}
}

// planMeta is what a plan Secret records besides the plan's text.
type planMeta struct {
	ID            string          `json:"id"`
	Changes       []engine.Change `json:"changes"`
	OutputsChange bool            `json:"outputsChange,omitempty"`
	Resources     int             `json:"resources"`
	InputsHash    string          `json:"inputsHash"`
	// File names the chunk set that holds the plan file; nil in a plan Secret written
	// before plans were chunked, which held the file itself (resource.PlanFileKey).
	File *chunkIndex `json:"file,omitempty"`
	// Lock is the dependency lock the plan was made with, and ProviderChanges the
	// provider versions it moves (engine.Plan).
	Lock            []byte                  `json:"lock,omitempty"`
	ProviderChanges []engine.ProviderChange `json:"providerChanges,omitempty"`
	// Document is the plan's redacted resource changes, which plan policies evaluate
	// again when the plan is approved; left out when large (the plan is then made again).
	Document json.RawMessage `json:"document,omitempty"`
}

// Save keeps plan, made for reason from inputs hash, for approval: the file in a new
// chunk set, then the meta that names the set, and the text; then it drops older sets. A
// plan file over what maxChunks Secrets hold is a PlanTooLarge user error.
func (s *Store) Save(ctx context.Context, mg resource.Managed, plan *engine.Plan, reason common.PlanReason, hash string) error {
	chunks, idx := splitPlan(plan.File, s.chunkSize())
	if len(chunks) > s.chunkLimit() {
		return s.tooLarge(plan, fmt.Sprintf("its file is %s, over the %s that %d Secrets hold", mib(len(plan.File)), mib(s.chunkLimit()*s.chunkSize()), s.chunkLimit()))
	}
	m := planMeta{ID: plan.ID, Changes: plan.Changes, OutputsChange: plan.OutputsChange, Resources: plan.Resources, InputsHash: hash, File: &idx,
		Lock: plan.Lock, ProviderChanges: plan.ProviderChanges}
	if len(plan.Document) <= planIndexBytes/4 && json.Valid(plan.Document) {
		m.Document = plan.Document
	}
	meta, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode plan: %w", err)
	}
	if len(meta) > planIndexBytes/2 {
		return s.tooLarge(plan, fmt.Sprintf("its list of %d changes is %s, over the %s a plan Secret keeps for it", len(plan.Changes), mib(len(meta)), mib(planIndexBytes/2)))
	}
	if err := s.writeChunks(ctx, mg, idx, chunks); err != nil {
		return err
	}
	if _, err := s.write(ctx, mg, map[string][]byte{resource.PlanMetaKey: meta}); err != nil {
		return err
	}
	if err := s.writeText(ctx, mg, plan, reason, hash); err != nil {
		return err
	}
	return s.dropChunks(ctx, mg, idx.set()) // older sets, and any a failed save left behind
}

// tooLarge is the user error of a plan that cannot be kept for approval, and why.
func (s *Store) tooLarge(plan *engine.Plan, why string) error {
	return resource.UserErrorf(common.ReasonPlanTooLarge,
		"plan %s cannot be kept for approval: %s. Nothing was applied. Setting spec.approvedPlan to %s applies the next plan at once if it has this id; or make the plan smaller (fewer or smaller variable values, or the module split in parts)",
		plan.ID, why, plan.ID)
}

// Load returns the saved plan with the inputs hash it was made from; nil when none is
// kept, or when its chunks are gone or altered (the caller then plans again).
func (s *Store) Load(ctx context.Context, mg resource.Managed) (*engine.Plan, string, error) {
	sec := &corev1.Secret{}
	err := s.reader.Get(ctx, client.ObjectKey{Namespace: mg.GetNamespace(), Name: resource.PlanSecretName(mg)}, sec)
	if apierrors.IsNotFound(err) || err == nil && len(sec.Data[resource.PlanMetaKey]) == 0 {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read saved plan: %w", err)
	}
	var meta planMeta
	if err := json.Unmarshal(sec.Data[resource.PlanMetaKey], &meta); err != nil {
		return nil, "", fmt.Errorf("read saved plan: %w", err)
	}
	file := sec.Data[resource.PlanFileKey]
	if meta.File != nil {
		file, err = s.readChunks(ctx, mg, *meta.File)
	}
	if errors.Is(err, errPlanIncomplete) || err == nil && len(file) == 0 {
		log.FromContext(ctx).Info("the saved plan is incomplete; planning again", "plan", meta.ID)
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	text, err := s.readText(ctx, mg, meta.ID)
	if err != nil {
		return nil, "", err
	}
	if text == "" {
		text = string(sec.Data[resource.PlanTextKey]) // saved before texts moved to Plans
	}
	return &engine.Plan{ID: meta.ID, Changes: meta.Changes, OutputsChange: meta.OutputsChange, Resources: meta.Resources,
		File: file, Text: text, Lock: meta.Lock, ProviderChanges: meta.ProviderChanges, Document: meta.Document}, meta.InputsHash, nil
}

// KeepText keeps plan, made for reason from inputs hash, as users see it: the plan just
// applied, or drift that the management policies leave uncorrected; and drops the saved
// plan. The engine has already redacted the text.
func (s *Store) KeepText(ctx context.Context, mg resource.Managed, plan *engine.Plan, reason common.PlanReason, hash string) error {
	if err := s.writeText(ctx, mg, plan, reason, hash); err != nil {
		return err
	}
	return s.dropSaved(ctx, mg)
}

// Discard drops a saved plan that will never be applied, because a later plan has no
// changes (the edit was reverted, say); its text stays.
func (s *Store) Discard(ctx context.Context, mg resource.Managed) error {
	return s.dropSaved(ctx, mg)
}

// dropSaved deletes mg's plan Secret (the saved plan's meta, or the text a Secret held
// before texts moved to Plans) and the chunk set it names.
func (s *Store) dropSaved(ctx context.Context, mg resource.Managed) error {
	sec := &corev1.Secret{}
	err := s.reader.Get(ctx, client.ObjectKey{Namespace: mg.GetNamespace(), Name: resource.PlanSecretName(mg)}, sec)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("drop saved plan: %w", err)
	}
	if err := s.client.Delete(ctx, sec); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("drop saved plan: %w", err)
	}
	return s.dropIndexed(ctx, mg, sec.Data[resource.PlanMetaKey])
}

// Remove deletes mg's plan Secret, chunks and Plan: saved plan and text.
func (s *Store) Remove(ctx context.Context, mg resource.Managed) error {
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: resource.PlanSecretName(mg), Namespace: mg.GetNamespace()}}
	if err := s.client.Delete(ctx, sec); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete saved plan: %w", err)
	}
	if err := s.dropChunks(ctx, mg, ""); err != nil {
		return err
	}
	return s.removeText(ctx, mg)
}

// write makes the plan Secret, owned by mg, hold exactly data, and returns what it held.
func (s *Store) write(ctx context.Context, mg resource.Managed, data map[string][]byte) (map[string][]byte, error) {
	sec := &corev1.Secret{}
	key := client.ObjectKey{Namespace: mg.GetNamespace(), Name: resource.PlanSecretName(mg)}
	err := s.reader.Get(ctx, key, sec)
	if apierrors.IsNotFound(err) {
		sec = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace,
				Labels: map[string]string{resource.PlanLabel: "true", resource.ManagedLabel: string(mg.GetUID())}},
			Data: data,
		}
		if err := controllerutil.SetOwnerReference(mg, sec, s.client.Scheme()); err != nil {
			return nil, fmt.Errorf("keep plan: %w", err)
		}
		if err := s.client.Create(ctx, sec); err != nil {
			return nil, fmt.Errorf("keep plan: %w", err)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("keep plan: %w", err)
	}
	prev, owned := sec.Data, len(sec.OwnerReferences)
	if err := controllerutil.SetOwnerReference(mg, sec, s.client.Scheme()); err != nil {
		return nil, fmt.Errorf("keep plan: %w", err)
	}
	if maps.EqualFunc(sec.Data, data, bytes.Equal) && owned == len(sec.OwnerReferences) {
		return prev, nil
	}
	sec.Data = data
	if err := s.client.Update(ctx, sec); err != nil {
		return nil, fmt.Errorf("keep plan: %w", err)
	}
	return prev, nil
}

func (s *Store) chunkSize() int {
	if s.ChunkBytes > 0 {
		return s.ChunkBytes
	}
	return planChunkBytes
}

func (s *Store) chunkLimit() int {
	if s.MaxChunks > 0 {
		return s.MaxChunks
	}
	return planMaxChunks
}

// fitText returns text cut at a line end to fit in limit bytes, with a note of what was
// left out: the text is for people, and must not stop the plan from being kept.
func fitText(text string, limit int) []byte {
	if len(text) <= limit {
		return []byte(text)
	}
	const note = "\n(%d more bytes of this plan's text are left out: a Secret holds at most 1 MiB)\n"
	cut := max(limit-len(note)-20, 0)
	if nl := strings.LastIndexByte(text[:cut], '\n'); nl >= 0 {
		cut = nl + 1
	}
	return fmt.Appendf([]byte(text[:cut]), note, len(text)-cut)
}

// mib shows a byte count in MiB.
func mib(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// Key returns the namespace's plan key, making it the first time.
func (s *Store) Key(ctx context.Context, namespace string) ([]byte, error) {
	if k, ok := s.keys.Load(namespace); ok {
		return k.([]byte), nil
	}
	sec := &corev1.Secret{}
	err := s.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: planKeySecret}, sec)
	if apierrors.IsNotFound(err) {
		k := make([]byte, 32)
		_, _ = rand.Read(k)
		sec = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: planKeySecret, Namespace: namespace,
			Labels: map[string]string{resource.PlanLabel: "key"}}, Data: map[string][]byte{"key": k}}
		if err = s.client.Create(ctx, sec); apierrors.IsAlreadyExists(err) {
			err = s.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: planKeySecret}, sec)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("plan key: %w", err)
	}
	k := sec.Data["key"]
	if len(k) == 0 {
		return nil, fmt.Errorf("plan key: Secret %s/%s has no key", namespace, planKeySecret)
	}
	s.keys.Store(namespace, k)
	return k, nil
}
