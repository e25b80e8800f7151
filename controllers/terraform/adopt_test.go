package terraform

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// TestAdoptBeforeDestroy: a resource deleted while its create is pending first imports,
// by its fixed identity, what the interrupted create may have made (and only that: the
// plan is targeted), so that the destroy removes it; a kind without a fixed identity
// says that what the create made is left.
func TestAdoptBeforeDestroy(t *testing.T) {
	bucket := func(resource.Managed, *registry.ProviderConfig) ([]common.ImportInstruction, bool) {
		return []common.ImportInstruction{{Address: "aws_s3_bucket.this", ID: "b-1"}}, true
	}
	importing := &engine.Plan{Changes: []engine.Change{{Address: "module.this.aws_s3_bucket.this", Actions: []string{"no-op"}, Importing: true}}}
	missing := errors.New(`Error: Cannot import non-existent remote object

While attempting to import an existing object to "module.this.aws_s3_bucket.this", the provider detected that no object exists with the given id.`)
	pendingCreate := func(m *terraformv1.Module) {
		m.Annotations = map[string]string{common.CreatePendingAnnotation: "2026-11-27T00:00:00Z"}
	}
	inState := `{"version":4,"resources":[{"module":"module.this","mode":"managed","type":"aws_s3_bucket","name":"this","instances":[{}]}]}`
	for _, tc := range []struct {
		name    string
		edit    func(*terraformv1.Module)
		recover func(resource.Managed, *registry.ProviderConfig) ([]common.ImportInstruction, bool)
		runner  fakeRunner
		render  error // the renderer's failure
		calls   string
		targets []string
		event   string
	}{
		{name: "a pending create is adopted by its identity, targeted", edit: pendingCreate, recover: bucket,
			runner: fakeRunner{plans: []*engine.Plan{importing}}, calls: "plan apply", targets: []string{"module.this.aws_s3_bucket.this"}},
		{name: "nothing made: the import finds nothing and nothing is applied", edit: pendingCreate, recover: bucket,
			runner: fakeRunner{planErrs: []error{missing}}, calls: "plan"},
		{name: "a kind whose create converges runs it again, whole", edit: pendingCreate,
			recover: func(resource.Managed, *registry.ProviderConfig) ([]common.ImportInstruction, bool) { return nil, true },
			runner:  fakeRunner{plans: []*engine.Plan{{Changes: []engine.Change{{Address: "module.this.terraform_data.this", Actions: []string{"create"}}}}}},
			calls:   "plan apply", targets: []string{}},
		{name: "what the state holds is not imported again", edit: pendingCreate, recover: bucket, runner: fakeRunner{state: inState}},
		{name: "a settled create needs no adoption", recover: bucket},
		{name: "no fixed identity: a warning says what is left", edit: pendingCreate,
			event: "Warning CreateInterrupted deleted after a create was interrupted"},
		{name: "a resource that no longer renders is deleted all the same, with a warning", edit: pendingCreate, recover: bucket,
			render: resource.UserErrorf(common.ReasonReconcileError, "provider aws/gone not found"),
			event:  "Warning CreateInterrupted deleted after a create was interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.edit)
			kind, tfKind := *h.tf.kind, *h.tf.kind.Terraform
			tfKind.RecoverCreate = tc.recover
			kind.Terraform = &tfKind
			h.tf.kind = &kind
			*h.runner = tc.runner
			h.render.err = tc.render
			if err := h.tf.newRun(h.get(), nil).adoptBeforeDestroy(context.Background()); err != nil {
				t.Fatalf("adopt: %v", err)
			}
			if got := h.calls(); got != tc.calls {
				t.Errorf("runs %q, want %q", got, tc.calls)
			}
			if tc.targets != nil {
				if d := cmp.Diff(tc.targets, h.runner.targets, cmpopts.EquateEmpty()); d != "" {
					t.Errorf("plan targets (-want +got):\n%s", d)
				}
			}
			if evs := h.drain(); tc.event != "" && !hasEvent(evs, tc.event) {
				t.Errorf("events %q, want one starting %q", evs, tc.event)
			}
		})
	}
}
