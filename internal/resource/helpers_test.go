package resource

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

// TestConnectionSecretRef: no reference writes nothing; a reference without a namespace
// is in the resource's own.
func TestConnectionSecretRef(t *testing.T) {
	cases := map[string]struct {
		ref    *common.SecretReference
		want   common.SecretReference
		wantOK bool
	}{
		"none":            {nil, common.SecretReference{}, false},
		"own namespace":   {&common.SecretReference{Name: "conn"}, common.SecretReference{Name: "conn", Namespace: "team"}, true},
		"other namespace": {&common.SecretReference{Name: "conn", Namespace: "apps"}, common.SecretReference{Name: "conn", Namespace: "apps"}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mg := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "m"}}
			mg.Spec.WriteConnectionSecretToRef = tc.ref
			got, ok := ConnectionSecretRef(mg)
			if diff := cmp.Diff(tc.want, got); diff != "" || ok != tc.wantOK {
				t.Errorf("ok = %v, want %v; ref (-want +got):\n%s", ok, tc.wantOK, diff)
			}
		})
	}
}

// TestSyncBindingPhase: no claim is Unbound; a claim binds an unbound resource; Released
// stays Released (the claim reconciler's to change).
func TestSyncBindingPhase(t *testing.T) {
	claim := &common.ObjectReference{Name: "c"}
	cases := map[string]struct {
		claimRef *common.ObjectReference
		before   common.BindingPhase
		want     common.BindingPhase
	}{
		"new, no claim":     {nil, "", common.BindingPhaseUnbound},
		"bound, claim gone": {nil, common.BindingPhaseBound, common.BindingPhaseUnbound},
		"new, claimed":      {claim, "", common.BindingPhaseBound},
		"unbound, claimed":  {claim, common.BindingPhaseUnbound, common.BindingPhaseBound},
		"released stays":    {claim, common.BindingPhaseReleased, common.BindingPhaseReleased},
		"bound stays":       {claim, common.BindingPhaseBound, common.BindingPhaseBound},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mg := &terraformv1.Module{}
			mg.Spec.ClaimRef = tc.claimRef
			mg.Status.BindingPhase = tc.before
			SyncBindingPhase(mg)
			if got := mg.Status.BindingPhase; got != tc.want {
				t.Errorf("phase = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestAnnotationsAndNames: adoption, pausing and the state and plan names derived from
// a resource.
func TestAnnotationsAndNames(t *testing.T) {
	cases := map[string]struct {
		annotations map[string]string
		imports     []common.ImportInstruction
		adopting    bool
		paused      bool
	}{
		"plain":              {nil, nil, false, false},
		"imports":            {nil, []common.ImportInstruction{{Address: "a.b", ID: "x"}}, true, false},
		"adopted annotation": {map[string]string{common.AdoptedAnnotation: "true"}, nil, true, false},
		"adopted, not true":  {map[string]string{common.AdoptedAnnotation: "yes"}, nil, false, false},
		"paused":             {map[string]string{common.PausedAnnotation: "true"}, nil, false, true},
		"paused false":       {map[string]string{common.PausedAnnotation: "false"}, nil, false, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mg := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}}
			mg.Spec.Imports = tc.imports
			if Adopting(mg) != tc.adopting || Paused(mg) != tc.paused {
				t.Errorf("Adopting = %v, Paused = %v; want %v, %v", Adopting(mg), Paused(mg), tc.adopting, tc.paused)
			}
		})
	}
	mg := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{UID: "1b4e28ba-2fa1-11d2-883f-0016d3cca427"}}
	got := []string{StateSuffix(mg), StateSecretName(mg), PlanSecretName(mg)}
	want := []string{"1b4e28ba2fa111d2883f0016d3cca427", "tfstate-default-1b4e28ba2fa111d2883f0016d3cca427", "tfplan-1b4e28ba2fa111d2883f0016d3cca427"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

// TestSetCondition: a change is reported when status, reason or message differ, not for
// a new generation alone (which is still recorded).
func TestSetCondition(t *testing.T) {
	conds := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "R", Message: "m", ObservedGeneration: 1}}
	cases := []struct {
		name    string
		status  metav1.ConditionStatus
		reason  string
		message string
		changed bool
	}{
		{"same, new generation", metav1.ConditionTrue, "R", "m", false},
		{"status", metav1.ConditionFalse, "R", "m", true},
		{"reason", metav1.ConditionFalse, "S", "m", true},
		{"message", metav1.ConditionFalse, "S", "n", true},
		{"same again", metav1.ConditionFalse, "S", "n", false},
	}
	for i, tc := range cases {
		gen := int64(i + 2)
		if got := SetCondition(&conds, gen, "Ready", tc.status, tc.reason, tc.message); got != tc.changed {
			t.Errorf("%s: changed = %v, want %v", tc.name, got, tc.changed)
		}
		if len(conds) != 1 || conds[0].ObservedGeneration != gen || conds[0].Message != tc.message {
			t.Errorf("%s: conditions = %+v", tc.name, conds)
		}
	}
	if !SetCondition(&conds, 9, "Synced", metav1.ConditionTrue, "R", "") || len(conds) != 2 {
		t.Errorf("a new type is a change and is added: %+v", conds)
	}
	if IsReady(conds) {
		t.Error("Ready=False is not ready")
	}
	SetCondition(&conds, 9, "Ready", metav1.ConditionTrue, "R", "")
	if !IsReady(conds) {
		t.Error("Ready=True is ready")
	}
}

// TestFinalizers: the finalizer is written only when it changes.
func TestFinalizers(t *testing.T) {
	ctx := context.Background()
	updates := 0
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
	c := fake.NewClientBuilder().WithObjects(cm).WithInterceptorFuncs(interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			updates++
			return c.Update(ctx, obj, opts...)
		}}).Build()
	steps := []struct {
		name    string
		do      func(context.Context, client.Client, client.Object) error
		updates int
		has     bool
	}{
		{"add", AddFinalizer, 1, true},
		{"add again", AddFinalizer, 1, true},
		{"remove", RemoveFinalizer, 2, false},
		{"remove again", RemoveFinalizer, 2, false},
	}
	for _, s := range steps {
		got := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
			t.Fatal(err)
		}
		if err := s.do(ctx, c, got); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
			t.Fatal(err)
		}
		has := len(got.Finalizers) == 1 && got.Finalizers[0] == Finalizer
		if updates != s.updates || has != s.has {
			t.Errorf("%s: %d updates, finalizer %v; want %d, %v", s.name, updates, has, s.updates, s.has)
		}
	}
}

// TestDeleteExactly: the delete carries the UID read, so the API server refuses it for a
// replacement; an object gone already is no error.
func TestDeleteExactly(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct {
		stored  string // UID the "API server" holds; "" means gone
		readUID string
		wantErr bool
	}{
		"same object": {"a", "a", false},
		"replaced":    {"b", "a", true},
		"gone":        {"", "a", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			deleted := false
			c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
				Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
					o := &client.DeleteOptions{}
					o.ApplyOptions(opts)
					switch {
					case tc.stored == "":
						return apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, obj.GetName())
					case o.Preconditions == nil || o.Preconditions.UID == nil || string(*o.Preconditions.UID) != tc.stored:
						return apierrors.NewConflict(schema.GroupResource{Resource: "secrets"}, obj.GetName(), errors.New("uid precondition"))
					}
					deleted = true
					return nil
				}}).Build()
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s", UID: "x"}}
			s.UID = types.UID(tc.readUID)
			err := DeleteExactly(ctx, c, s)
			if (err != nil) != tc.wantErr || deleted != (tc.stored == tc.readUID) {
				t.Errorf("err = %v, deleted = %v", err, deleted)
			}
		})
	}
}

// TestControlledBy: only the controller owner counts.
func TestControlledBy(t *testing.T) {
	yes := true
	obj := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
		{UID: "owner", Name: "o"}, {UID: "ctl", Name: "c", Controller: &yes}}}}
	for uid, want := range map[string]bool{"ctl": true, "owner": false, "other": false} {
		if got := ControlledBy(obj, types.UID(uid)); got != want {
			t.Errorf("ControlledBy(%s) = %v, want %v", uid, got, want)
		}
	}
	if ControlledBy(&corev1.Secret{}, "ctl") {
		t.Error("no owner: not controlled")
	}
}
