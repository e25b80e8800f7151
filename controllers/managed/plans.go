package managed

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
)

// planKeySecret holds, per namespace, the key that plan ids hash sensitive values with.
const planKeySecret = "terraplane-plan-key"

// planStore keeps a resource's saved plan in a Secret beside its state while the plan
// awaits approval (it holds secret values in plain text, as the state does), and the text
// of its latest plan after it is applied.
type planStore struct {
	client client.Client // writes
	reader client.Reader // reads, uncached: plan Secrets stay out of the cache
	keys   sync.Map      // namespace → []byte
}

// planMeta is what a plan Secret records besides the plan file and text.
type planMeta struct {
	ID            string          `json:"id"`
	Changes       []engine.Change `json:"changes"`
	OutputsChange bool            `json:"outputsChange,omitempty"`
	Resources     int             `json:"resources"`
	InputsHash    string          `json:"inputsHash"`
}

// save keeps plan, made from inputs hash, for approval.
func (s *planStore) save(ctx context.Context, mg resource.Managed, plan *engine.Plan, hash string) error {
	meta, err := json.Marshal(planMeta{ID: plan.ID, Changes: plan.Changes, OutputsChange: plan.OutputsChange, Resources: plan.Resources, InputsHash: hash})
	if err != nil {
		return fmt.Errorf("encode plan: %w", err)
	}
	return s.write(ctx, mg, map[string][]byte{resource.PlanFileKey: plan.File, resource.PlanTextKey: []byte(plan.Text), resource.PlanMetaKey: meta})
}

// load returns the saved plan with the inputs hash it was made from; nil when none is kept.
func (s *planStore) load(ctx context.Context, mg resource.Managed) (*engine.Plan, string, error) {
	sec := &corev1.Secret{}
	err := s.reader.Get(ctx, client.ObjectKey{Namespace: mg.GetNamespace(), Name: resource.PlanSecretName(mg)}, sec)
	if apierrors.IsNotFound(err) || err == nil && len(sec.Data[resource.PlanFileKey]) == 0 {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read saved plan: %w", err)
	}
	var meta planMeta
	if err := json.Unmarshal(sec.Data[resource.PlanMetaKey], &meta); err != nil {
		return nil, "", fmt.Errorf("read saved plan: %w", err)
	}
	return &engine.Plan{ID: meta.ID, Changes: meta.Changes, OutputsChange: meta.OutputsChange, Resources: meta.Resources,
		File: sec.Data[resource.PlanFileKey], Text: string(sec.Data[resource.PlanTextKey])}, meta.InputsHash, nil
}

// keepText drops the saved plan file and keeps text, the plan as shown to users: the
// plan just applied (none for a create without a saved plan), or drift that the
// management policies leave uncorrected. The engine has already redacted text.
func (s *planStore) keepText(ctx context.Context, mg resource.Managed, text string) error {
	return s.write(ctx, mg, map[string][]byte{resource.PlanTextKey: []byte(text)})
}

// discard drops a saved plan that will never be applied, because a later plan has no
// changes (the edit was reverted, say), and keeps its text.
func (s *planStore) discard(ctx context.Context, mg resource.Managed) error {
	sec := &corev1.Secret{}
	err := s.reader.Get(ctx, client.ObjectKey{Namespace: mg.GetNamespace(), Name: resource.PlanSecretName(mg)}, sec)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("drop saved plan: %w", err)
	}
	if _, saved := sec.Data[resource.PlanFileKey]; !saved {
		return nil
	}
	sec.Data = map[string][]byte{resource.PlanTextKey: sec.Data[resource.PlanTextKey]}
	if err := s.client.Update(ctx, sec); err != nil {
		return fmt.Errorf("drop saved plan: %w", err)
	}
	return nil
}

// remove deletes mg's plan Secret, saved plan and text.
func (s *planStore) remove(ctx context.Context, mg resource.Managed) error {
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: resource.PlanSecretName(mg), Namespace: mg.GetNamespace()}}
	if err := s.client.Delete(ctx, sec); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete saved plan: %w", err)
	}
	return nil
}

// write makes the plan Secret hold exactly data.
func (s *planStore) write(ctx context.Context, mg resource.Managed, data map[string][]byte) error {
	sec := &corev1.Secret{}
	key := client.ObjectKey{Namespace: mg.GetNamespace(), Name: resource.PlanSecretName(mg)}
	err := s.reader.Get(ctx, key, sec)
	if apierrors.IsNotFound(err) {
		sec = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace,
				Labels: map[string]string{resource.PlanLabel: "true", resource.ManagedLabel: string(mg.GetUID())}},
			Data: data,
		}
		if err := s.client.Create(ctx, sec); err != nil {
			return fmt.Errorf("keep plan: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("keep plan: %w", err)
	}
	if maps.EqualFunc(sec.Data, data, bytes.Equal) {
		return nil // unchanged: an observed resource finds the same drift every interval
	}
	sec.Data = data
	if err := s.client.Update(ctx, sec); err != nil {
		return fmt.Errorf("keep plan: %w", err)
	}
	return nil
}

// key returns the namespace's plan key, making it the first time.
func (s *planStore) key(ctx context.Context, namespace string) ([]byte, error) {
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
