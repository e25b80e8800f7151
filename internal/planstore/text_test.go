package planstore

import (
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
)

// TestPlanText: a plan's text goes to a Plan object owned by the resource, labelled with
// it, naming it, with the plan's summary and provider moves; an unchanged text writes
// nothing; a text too large for an object is cut with a note; the text is read only for
// its own plan id.
func TestPlanText(t *testing.T) {
	ctx := context.Background()
	updates := 0
	s, c, mg := chunkStore(t, interceptor.Funcs{Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
		if _, ok := obj.(*terraformv1.Plan); ok {
			updates++
		}
		return c.Update(ctx, obj, opts...)
	}})
	plan := &engine.Plan{ID: "aaaa000000000040", Changes: create.Changes, Text: "+ terraform_data.a",
		ProviderChanges: []engine.ProviderChange{{Provider: "hashicorp/random", From: "3.9.0", To: "3.10.0"}}}
	if err := s.writeText(ctx, mg, plan, common.PlanUpdate, "h1"); err != nil {
		t.Fatal(err)
	}
	p := planObject(mg)
	if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatal(err)
	}
	if p.Text != plan.Text || p.Summary.ID != plan.ID || p.Summary.Add != 1 || p.Summary.InputsHash != "h1" || p.Summary.Reason != common.PlanUpdate {
		t.Errorf("Plan holds %q, summary %+v", p.Text, p.Summary)
	}
	if len(p.Summary.Providers) != 1 || p.Summary.Providers[0].To != "3.10.0" {
		t.Errorf("provider moves %+v", p.Summary.Providers)
	}
	if p.Labels[resource.ManagedLabel] != string(mg.UID) || p.ResourceRef.Name != mg.Name || p.ResourceRef.Kind != "Module" ||
		len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != mg.UID {
		t.Errorf("Plan not tied to its resource: labels %v, ref %+v, owners %+v", p.Labels, p.ResourceRef, p.OwnerReferences)
	}
	if err := s.writeText(ctx, mg, plan, common.PlanUpdate, "h1"); err != nil || updates != 0 {
		t.Errorf("the same text again: %d updates, %v; want none", updates, err)
	}
	if got, err := s.readText(ctx, mg, plan.ID); err != nil || got != plan.Text {
		t.Errorf("read %q, %v", got, err)
	}
	if got, err := s.readText(ctx, mg, "another"); err != nil || got != "" {
		t.Errorf("another plan's text: %q, %v; want none", got, err)
	}

	big := &engine.Plan{ID: "aaaa000000000041", Changes: create.Changes, Text: strings.Repeat("a line of a large plan\n", planTextBytes/10)}
	if err := s.writeText(ctx, mg, big, common.PlanUpdate, "h2"); err != nil {
		t.Fatal(err)
	}
	got, err := s.readText(ctx, mg, big.ID)
	if err != nil || len(got) > planTextBytes || !strings.Contains(got, "more bytes of this plan's text are left out") {
		t.Errorf("a large text kept whole or lost: %d bytes, %v", len(got), err)
	}

	if err := s.removeText(ctx, mg); err != nil {
		t.Fatal(err)
	}
	if err := s.removeText(ctx, mg); err != nil {
		t.Errorf("removing a Plan already gone: %v", err)
	}
	if got, err := s.readText(ctx, mg, big.ID); err != nil || got != "" {
		t.Errorf("read %q, %v after remove", got, err)
	}
}

// TestLegacyPlanSecret: a plan Secret written before plans were chunked, with the file
// and text in it, still loads; once dropped, nothing loads.
func TestLegacyPlanSecret(t *testing.T) {
	ctx := context.Background()
	s, c, mg := chunkStore(t, interceptor.Funcs{})
	meta := `{"id":"aaaa000000000050","changes":[{"address":"terraform_data.a","actions":["create"]}],"resources":1,"inputsHash":"h1"}`
	if _, err := s.write(ctx, mg, map[string][]byte{resource.PlanMetaKey: []byte(meta), resource.PlanFileKey: []byte("old-file"),
		resource.PlanTextKey: []byte("old text")}); err != nil {
		t.Fatal(err)
	}
	p, hash, err := s.Load(ctx, mg)
	if err != nil || p == nil || string(p.File) != "old-file" || p.Text != "old text" || hash != "h1" || len(p.Changes) != 1 {
		t.Fatalf("loaded %+v %q %v", p, hash, err)
	}
	if err := s.Discard(ctx, mg); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: mg.Namespace, Name: resource.PlanSecretName(mg)}, sec); !apierrors.IsNotFound(err) {
		t.Errorf("the plan Secret is left: %v", err)
	}
	if p, _, err := s.Load(ctx, mg); p != nil || err != nil {
		t.Errorf("loaded %+v, %v after discard", p, err)
	}
}

// TestPlanKey: a namespace's plan key is made once, kept in a Secret, and shared by
// callers that race to make it; a key Secret without a key is an error.
func TestPlanKey(t *testing.T) {
	ctx := context.Background()
	creates := 0
	var mu sync.Mutex
	s, c, _ := chunkStore(t, interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		mu.Lock()
		creates++
		mu.Unlock()
		return c.Create(ctx, obj, opts...)
	}})
	keys := make([][]byte, 4)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := (&Store{client: s.client, reader: s.reader}).Key(ctx, "platform")
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for i, k := range keys {
		if len(k) != 32 || string(k) != string(keys[0]) {
			t.Errorf("caller %d got key %x, want the one key of 32 bytes", i, k)
		}
	}
	sec := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "platform", Name: planKeySecret}, sec); err != nil || sec.Labels[resource.PlanLabel] != "key" {
		t.Fatalf("key Secret %+v, %v", sec.Labels, err)
	}
	before := creates
	if k, err := s.Key(ctx, "platform"); err != nil || string(k) != string(keys[0]) {
		t.Errorf("the store's own key: %x, %v", k, err)
	}
	if k, err := s.Key(ctx, "platform"); err != nil || string(k) != string(keys[0]) || creates != before {
		t.Errorf("asked again: %x, %v, %d creates; want the cached key and no write", k, err, creates-before)
	}

	empty := &corev1.Secret{}
	empty.Name, empty.Namespace = planKeySecret, "broken"
	if err := c.Create(ctx, empty); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Key(ctx, "broken"); err == nil || !strings.Contains(err.Error(), "has no key") {
		t.Errorf("a key Secret without a key: %v", err)
	}
}

// TestSummary: the status form of a plan counts each action and lists at most
// common.MaxPlannedChanges changes, saying how many it left out.
func TestSummary(t *testing.T) {
	var changes []engine.Change
	for i := range common.MaxPlannedChanges + 3 {
		actions := []string{"create"}
		if i == 0 {
			actions = []string{"delete", "create"}
		}
		changes = append(changes, engine.Change{Address: "terraform_data.a" + strings.Repeat("x", i), Actions: actions})
	}
	s := Summary("p1", common.PlanUpdate, changes, "h1", metav1.Now())
	if s.Replace != 1 || s.Add != common.MaxPlannedChanges+2 || len(s.Changes) != common.MaxPlannedChanges || s.ChangesOmitted != 3 {
		t.Errorf("summary %+v", s)
	}
	if got := ProviderSummary(nil); got != nil {
		t.Errorf("no provider moves: %+v", got)
	}
}
