package dynclaim

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// TestClass: a portable class is read and written as an object of its kind, and its
// binding mode defaults to Immediate.
func TestClass(t *testing.T) {
	ref := common.ClassReference{APIVersion: "terraform.terraplane.io/v1alpha1", Kind: "ModuleClass", Name: "vpc", Namespace: "platform"}
	cases := map[string]struct {
		mode common.BindingMode
		want common.BindingMode
	}{
		"unset is Immediate":   {"", common.BindingImmediate},
		"Immediate":            {common.BindingImmediate, common.BindingImmediate},
		"WaitForFirstConsumer": {common.BindingWaitForFirstConsumer, common.BindingWaitForFirstConsumer},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c, server := newClient()
			class := NewClass(classGVK)
			class.Namespace, class.Name, class.ClassRef, class.BindingMode = "team-a", "fast", ref, tc.mode
			if err := c.Create(ctx, class); err != nil {
				t.Fatal(err)
			}
			u := empty(classGVK)
			if err := server.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "fast"}, u); err != nil {
				t.Fatal(err)
			}
			if got, _, _ := unstructured.NestedString(u.Object, "classRef", "name"); got != "vpc" {
				t.Errorf("stored classRef.name = %q, want vpc (top level, as the class CRD has it)", got)
			}
			read := NewClass(classGVK)
			if err := c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "fast"}, read); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]any{ref, tc.want, classGVK}, []any{read.GetClassRef(), read.GetBindingMode(), read.GroupVersionKind()}); diff != "" {
				t.Errorf("class read back (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeepCopy: a copy shares nothing with its original.
func TestDeepCopy(t *testing.T) {
	cl := claim(`{"size": 1}`)
	cl.Labels = map[string]string{"a": "1"}
	cl.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: "True"}}
	cp := cl.DeepCopyObject().(*Claim)
	if diff := cmp.Diff(cl, cp); diff != "" {
		t.Fatalf("copy differs (-orig +copy):\n%s", diff)
	}
	cp.Labels["a"] = "2"
	cp.Spec.ClassRef.Name = "slow"
	cp.Spec.Parameters.Raw[1] = 'X'
	cp.Status.Conditions[0].Status = "False"
	if cl.Labels["a"] != "1" || cl.Spec.ClassRef.Name != "fast" || string(cl.Spec.Parameters.Raw) != `{"size": 1}` || cl.Status.Conditions[0].Status != "True" {
		t.Errorf("changing the copy changed the claim: %+v", cl)
	}

	class := NewClass(classGVK)
	class.Annotations = map[string]string{"a": "1"}
	class.ClassRef = common.ClassReference{Name: "vpc"}
	cc := class.DeepCopyObject().(*Class)
	if diff := cmp.Diff(class, cc); diff != "" {
		t.Fatalf("class copy differs (-orig +copy):\n%s", diff)
	}
	cc.Annotations["a"] = "2"
	if class.Annotations["a"] != "1" {
		t.Error("changing the class copy changed the class")
	}
}

func TestKinds(t *testing.T) {
	cases := map[string]struct {
		got  schema.GroupVersionKind
		want schema.GroupVersionKind
	}{
		"claim's unstructured": {NewClaim(claimGVK).Unstructured().GroupVersionKind(), claimGVK},
		"class's unstructured": {NewClass(classGVK).Unstructured().GroupVersionKind(), classGVK},
		"claim list":           {NewList(claimGVK).(*unstructured.UnstructuredList).GroupVersionKind(), claimGVK.GroupVersion().WithKind(claimGVK.Kind + "List")},
		"class list":           {NewList(classGVK).(*unstructured.UnstructuredList).GroupVersionKind(), classGVK.GroupVersion().WithKind("NetworkClassList")},
		"claim's own kind":     {NewClaim(claimGVK).GroupVersionKind(), claimGVK},
	}
	for name, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", name, tc.got, tc.want)
		}
	}
	if u := NewClaim(claimGVK).Unstructured(); len(u.Object) != 2 {
		t.Errorf("Unstructured() is not empty: %v", u.Object)
	}
}

func TestParameters(t *testing.T) {
	cases := map[string]struct {
		raw     *apiextensionsv1.JSON
		want    map[string]any
		wantErr bool
	}{
		"unset":      {nil, map[string]any{}, false},
		"an object":  {&apiextensionsv1.JSON{Raw: []byte(`{"cidr": "10.0.0.0/16", "zones": 3}`)}, map[string]any{"cidr": "10.0.0.0/16", "zones": float64(3)}, false},
		"not object": {&apiextensionsv1.JSON{Raw: []byte(`[1]`)}, nil, true},
	}
	for name, tc := range cases {
		cl := NewClaim(claimGVK)
		cl.Spec.Parameters = tc.raw
		got, err := cl.Parameters()
		if (err != nil) != tc.wantErr || cmp.Diff(tc.want, got) != "" {
			t.Errorf("%s: Parameters() = %v, %v", name, got, err)
		}
	}
}
