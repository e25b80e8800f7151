package planstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/resource"
)

// create is a plan's changes that create one object.
var create = &engine.Plan{Changes: []engine.Change{{Address: "terraform_data.a", Actions: []string{"create"}}}}

func TestSplitAndJoinPlan(t *testing.T) {
	file := []byte("0123456789")
	chunks, idx := splitPlan(file, 4)
	if len(chunks) != 3 || string(chunks[0]) != "0123" || string(chunks[2]) != "89" || idx.Chunks != 3 || idx.Size != 10 || len(idx.SHA256) != 64 {
		t.Fatalf("split into %q, %+v", chunks, idx)
	}
	if got, err := joinPlan(chunks, idx); err != nil || !bytes.Equal(got, file) {
		t.Fatalf("joined %q, %v", got, err)
	}
	if one, idx1 := splitPlan(file, len(file)); len(one) != 1 || idx1.SHA256 != idx.SHA256 {
		t.Errorf("a file that fits is one chunk with the same hash: %q %+v", one, idx1)
	}
	altered := [][]byte{chunks[0], []byte("45X7"), chunks[2]}
	for name, cs := range map[string][][]byte{
		"hash mismatch":     altered,
		"a chunk missing":   {chunks[0], nil, chunks[2]},
		"fewer chunks":      chunks[:2],
		"a chunk too many":  append(append([][]byte{}, chunks...), []byte("x")),
		"chunks reordered":  {chunks[1], chunks[0], chunks[2]},
		"a chunk truncated": {chunks[0], chunks[1][:2], chunks[2]},
	} {
		if _, err := joinPlan(cs, idx); !errors.Is(err, errPlanIncomplete) {
			t.Errorf("%s: got %v, want errPlanIncomplete", name, err)
		}
	}
}

// chunkStore is a plan store over a fake client that cuts plans into chunks of 4 bytes,
// at most 3 of them, and the module it keeps plans of.
func chunkStore(t *testing.T, funcs interceptor.Funcs) (*Store, client.Client, *terraformv1.Module) {
	t.Helper()
	mg := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "platform", UID: "u-1"}}
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(mg).WithInterceptorFuncs(funcs).Build()
	return &Store{client: c, reader: c, ChunkBytes: 4, MaxChunks: 3}, c, mg
}

// chunkSecrets lists mg's chunk Secrets.
func chunkSecrets(t *testing.T, c client.Client, mg *terraformv1.Module) []corev1.Secret {
	t.Helper()
	list := &corev1.SecretList{}
	if err := c.List(context.Background(), list, client.MatchingLabels{resource.PlanLabel: planChunkLabel, resource.ManagedLabel: string(mg.UID)}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// TestChunkedPlanStore: a saved plan is kept in chunk Secrets owned by the resource, read
// back whole, replaced by the next, and dropped with the text kept; a set that lost a
// chunk or was altered is no saved plan (the reconciler plans again).
func TestChunkedPlanStore(t *testing.T) {
	ctx := context.Background()
	s, c, mg := chunkStore(t, interceptor.Funcs{})
	plan := &engine.Plan{ID: "aaaa000000000010", Changes: create.Changes, File: []byte("plan-file-1"), Text: "the text", Resources: 1}
	if err := s.Save(ctx, mg, plan, common.PlanUpdate, "h1"); err != nil {
		t.Fatal(err)
	}
	chunks := chunkSecrets(t, c, mg)
	if len(chunks) != 3 {
		t.Fatalf("%d chunk Secrets, want 3", len(chunks))
	}
	for _, sec := range chunks {
		if len(sec.OwnerReferences) != 1 || sec.OwnerReferences[0].UID != mg.UID || !strings.HasPrefix(sec.Name, resource.PlanSecretName(mg)+"-") {
			t.Errorf("chunk %s is not named after the plan Secret and owned by the module: %+v", sec.Name, sec.OwnerReferences)
		}
	}
	got, hash, err := s.Load(ctx, mg)
	if err != nil || got == nil || string(got.File) != "plan-file-1" || got.ID != plan.ID || got.Text != "the text" || hash != "h1" {
		t.Fatalf("loaded %+v %q %v", got, hash, err)
	}

	next := &engine.Plan{ID: "aaaa000000000011", Changes: create.Changes, File: []byte("plan-2"), Text: "the next"}
	if err := s.Save(ctx, mg, next, common.PlanUpdate, "h2"); err != nil {
		t.Fatal(err)
	}
	if n := len(chunkSecrets(t, c, mg)); n != 2 {
		t.Errorf("%d chunk Secrets after the next plan, want its 2 only", n)
	}
	if got, _, _ := s.Load(ctx, mg); got == nil || string(got.File) != "plan-2" || got.Text != "the next" {
		t.Errorf("loaded %+v, want the next plan with its text", got)
	}

	sec := chunkSecrets(t, c, mg)[0]
	sec.Data[planChunkKey] = []byte("XXXX")
	if err := c.Update(ctx, &sec); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.Load(ctx, mg); got != nil || err != nil {
		t.Errorf("an altered chunk: loaded %+v, %v; want no saved plan", got, err)
	}
	if err := c.Delete(ctx, &sec); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.Load(ctx, mg); got != nil || err != nil {
		t.Errorf("a missing chunk: loaded %+v, %v; want no saved plan", got, err)
	}

	if err := s.KeepText(ctx, mg, &engine.Plan{ID: next.ID, Text: "applied"}, common.PlanUpdate, "h2"); err != nil {
		t.Fatal(err)
	}
	if n := len(chunkSecrets(t, c, mg)); n != 0 {
		t.Errorf("%d chunk Secrets once only the text is kept", n)
	}
	if got, _, _ := s.Load(ctx, mg); got != nil {
		t.Errorf("loaded %+v once only the text is kept", got)
	}
	if err := s.Save(ctx, mg, plan, common.PlanUpdate, "h1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(ctx, mg); err != nil {
		t.Fatal(err)
	}
	all := &corev1.SecretList{}
	_ = c.List(ctx, all, client.HasLabels{resource.PlanLabel})
	plans := &terraformv1.PlanList{}
	_ = c.List(ctx, plans)
	if len(all.Items) != 0 || len(plans.Items) != 0 {
		t.Errorf("%d plan Secrets and %d Plans left after remove", len(all.Items), len(plans.Items))
	}
}

// TestHalfWrittenPlanIsNeverRead: when writing a new plan's chunks fails part way, the
// plan Secret still names the previous plan, which reads back whole.
func TestHalfWrittenPlanIsNeverRead(t *testing.T) {
	ctx := context.Background()
	creates := 0
	s, _, mg := chunkStore(t, interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if strings.Contains(obj.GetName(), "-") && obj.GetLabels()[resource.PlanLabel] == planChunkLabel {
			if creates++; creates == 5 {
				return errors.New("the API server went away")
			}
		}
		return c.Create(ctx, obj, opts...)
	}})
	if err := s.Save(ctx, mg, &engine.Plan{ID: "aaaa000000000020", Changes: create.Changes, File: []byte("first-plan")}, common.PlanUpdate, "h1"); err != nil {
		t.Fatal(err)
	}
	err := s.Save(ctx, mg, &engine.Plan{ID: "aaaa000000000021", Changes: create.Changes, File: []byte("second-plan")}, common.PlanUpdate, "h2")
	if err == nil {
		t.Fatal("the failed chunk write was not reported")
	}
	got, hash, err := s.Load(ctx, mg)
	if err != nil || got == nil || string(got.File) != "first-plan" || hash != "h1" {
		t.Fatalf("loaded %+v %q %v, want the first plan whole", got, hash, err)
	}
}

// TestSaveTooLarge: a plan file over what the chunk Secrets hold, or a list of changes
// over what the plan Secret keeps, is a PlanTooLarge user error that names the plan and
// keeps nothing.
func TestSaveTooLarge(t *testing.T) {
	ctx := context.Background()
	s, c, mg := chunkStore(t, interceptor.Funcs{})
	big := &engine.Plan{ID: "aaaa000000000030", Changes: create.Changes, File: []byte("0123456789abcdef"), Text: "big"}
	err := s.Save(ctx, mg, big, common.PlanUpdate, "h1")
	user, ok := resource.AsUserError(err)
	if !ok || user.Reason != common.ReasonPlanTooLarge || !strings.Contains(err.Error(), big.ID) || !strings.Contains(err.Error(), "3 Secrets") {
		t.Fatalf("saved a 16-byte file in 3 chunks of 4: %v", err)
	}
	many := make([]engine.Change, 0, 20000)
	for i := range 20000 {
		many = append(many, engine.Change{Address: fmt.Sprintf("terraform_data.item_with_a_long_name[%d]", i), Actions: []string{"create"}})
	}
	err = s.Save(ctx, mg, &engine.Plan{ID: "aaaa000000000031", Changes: many, File: []byte("ok")}, common.PlanUpdate, "h1")
	if user, ok := resource.AsUserError(err); !ok || user.Reason != common.ReasonPlanTooLarge || !strings.Contains(err.Error(), "20000 changes") {
		t.Fatalf("saved 20000 changes: %v", err)
	}
	if got := chunkSecrets(t, c, mg); len(got) != 0 {
		t.Errorf("a plan too large left chunks: %v", got)
	}
	if p, _, err := s.Load(ctx, mg); err != nil || p != nil {
		t.Errorf("a plan too large was kept: %+v %v", p, err)
	}
}

func TestFitText(t *testing.T) {
	if got := string(fitText("short", 100)); got != "short" {
		t.Errorf("got %q", got)
	}
	text := strings.Repeat("a line of the plan\n", 100)
	got := string(fitText(text, 400))
	kept, note, _ := strings.Cut(got, "\n(")
	if len(got) > 400 || !strings.HasPrefix(text, kept) || !strings.HasSuffix(kept, "\n") || !strings.Contains(note, "more bytes of this plan's text are left out") {
		t.Errorf("cut to %d bytes: %q", len(got), got)
	}
}
