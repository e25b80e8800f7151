package managed

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// goneExternal is a fakeExternal whose run finds its external resource deleted: it says
// so in the middle of Apply (Progressing), and its record says what it left missing.
type goneExternal struct {
	*fakeExternal
	c       client.Client
	missing string
	write   func(context.Context) error
	// midway is the Object as stored while Apply ran, after its progress write.
	midway *kubernetesv1.Object
}

func (g *goneExternal) Connect(ctx context.Context, mg resource.Managed) (External, error) {
	_, err := g.fakeExternal.Connect(ctx, mg)
	return g, err
}

func (g *goneExternal) Progress(write func(context.Context) error) { g.write = write }

func (g *goneExternal) Apply(ctx context.Context, mg resource.Managed) (Applied, error) {
	st := mg.GetManagedStatus()
	resource.NotReady(common.ReasonMissing, "bucket deleted, recreating it").Set(&st.Conditions, mg.GetGeneration())
	if err := g.write(ctx); err != nil {
		return Applied{}, err
	}
	g.midway = &kubernetesv1.Object{}
	if err := g.c.Get(ctx, client.ObjectKeyFromObject(mg), g.midway); err != nil {
		return Applied{}, err
	}
	applied, err := g.fakeExternal.Apply(ctx, mg)
	applied.Run = &Run{Terraform: st.Terraform, Missing: g.missing}
	return applied, err
}

// TestMissingExternalResource: a run that finds the external resource deleted writes
// Ready=False before its apply ends; once it recreated it, the resource is Ready again;
// when it leaves it missing (a held or observed change), Ready=False Missing stands
// whatever the outcome, and the generation counts as applied.
func TestMissingExternalResource(t *testing.T) {
	for _, tc := range []struct {
		name     string
		missing  string
		applyErr error
		want     string // Ready's Status/Reason afterwards
		progress bool   // Reconciling afterwards
	}{
		{name: "recreated", want: "True/Available"},
		{name: "left missing by a run that succeeded", missing: "bucket deleted, not recreated", want: "False/Missing"},
		{name: "left missing by a held plan", missing: "bucket deleted, not recreated", applyErr: resource.Holdf(common.ReasonAwaitingApproval, "approve it"),
			want: "False/Missing"},
		{name: "a failed recreate keeps Missing", applyErr: resource.UserErrorf("Boom", "it broke"), want: "False/Missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, true, func(o *kubernetesv1.Object) {
				o.Status.ObservedGeneration = 1
				o.Status.Conditions = []metav1.Condition{
					{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: common.ReasonAvailable, ObservedGeneration: 1},
					{Type: common.TypeSynced, Status: metav1.ConditionTrue, Reason: common.ReasonReconcileSuccess, ObservedGeneration: 1},
				}
			})
			ext := &goneExternal{fakeExternal: h.ext, c: h.c, missing: tc.missing}
			h.r.kind.Connector = ext
			h.ext.applyErr = tc.applyErr
			_, o, _ := h.reconcile()
			if got := condition(ext.midway, common.TypeReady); got.Reason != common.ReasonMissing {
				t.Errorf("Ready while the apply ran = %+v, want Missing", got)
			}
			ready := condition(o, common.TypeReady)
			if diff := cmp.Diff(tc.want, string(ready.Status)+"/"+ready.Reason); diff != "" {
				t.Errorf("Ready afterwards (-want +got):\n%s", diff)
			}
			if tc.missing != "" && ready.Message != tc.missing {
				t.Errorf("Ready message %q, want %q", ready.Message, tc.missing)
			}
			if tc.applyErr == nil && condition(o, common.TypeReconciling).Status == metav1.ConditionTrue {
				t.Errorf("Reconciling = %+v: the generation was applied", condition(o, common.TypeReconciling))
			}
		})
	}
}
