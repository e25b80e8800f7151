package kinds

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/modsource"
)

// TestClassLock: a Module of a ModuleClass may start from the lock the class recorded;
// the first lock a Module of the class runs with is recorded, a later one is not; a Module
// without a class (or whose class is gone) has none.
func TestClassLock(t *testing.T) {
	ctx := context.Background()
	classRef := func(name string) *common.ClassReference {
		return &common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: name, Namespace: "admin"}
	}
	recorded := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "recorded"}}
	recorded.Status.ProviderLock = "class lock"
	fresh := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "fresh"}}
	c := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(recorded, fresh).WithStatusSubresource(recorded, fresh).Build()
	cases := map[string]struct {
		class    *common.ClassReference
		want     string
		recorded string // the class's lock after recordClassLock(..., "run lock")
	}{
		"a class that recorded one":  {classRef("recorded"), "class lock", "class lock"},
		"a class that recorded none": {classRef("fresh"), "", "run lock"},
		"a class that is gone":       {classRef("gone"), "", ""},
		"no class":                   {nil, "", ""},
		"a class of another kind": {&common.ClassReference{APIVersion: "storage.aws.terraplane.io/v1alpha1", Kind: "S3BucketClass", Name: "fresh", Namespace: "admin"},
			"", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mg := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "m"}}
			mg.Spec.ClassRef = tc.class
			got, err := classLock(ctx, c, mg)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want || tc.want == "" && got != nil {
				t.Errorf("lock %q, want %q", got, tc.want)
			}
			if err := recordClassLock(ctx, c, mg, []byte("run lock")); err != nil {
				t.Fatal(err)
			}
			if tc.class == nil || tc.class.Kind != "ModuleClass" || tc.class.Name == "gone" {
				return
			}
			class := &terraformv1.ModuleClass{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "admin", Name: tc.class.Name}, class); err != nil {
				t.Fatal(err)
			}
			if class.Status.ProviderLock != tc.recorded {
				t.Errorf("class lock %q, want %q", class.Status.ProviderLock, tc.recorded)
			}
		})
	}
}

// TestEmptyLockWritesNothing: a run of a module without providers has an empty lock,
// which is not written to its class: there is nothing to fix, and each such run would
// write the class again.
func TestEmptyLockWritesNothing(t *testing.T) {
	ctx := context.Background()
	fresh := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "fresh"}}
	writes := 0
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(fresh).WithStatusSubresource(fresh).Build(),
		interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			writes++
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		}})
	mg := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "m"}}
	mg.Spec.ClassRef = &common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: "fresh", Namespace: "admin"}
	if err := recordClassLock(ctx, c, mg, []byte{}); err != nil {
		t.Fatal(err)
	}
	if writes != 0 {
		t.Errorf("an empty lock wrote the class %d times", writes)
	}
}

// randomLock is a dependency lock holding random at version v.
func randomLock(v string) string {
	return "provider \"registry.terraform.io/hashicorp/random\" {\n  version = \"" + v + "\"\n}\n"
}

// TestOfferClassUpgrade: newer provider versions a Module's plan found are offered to its
// ModuleClass, unless the class keeps them already (as its lock or an offer) or its module
// ships a lock of its own.
func TestOfferClassUpgrade(t *testing.T) {
	ctx := context.Background()
	modules := []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "plain"}, Data: map[string]string{"main.tf": `variable "a" {}`}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "locked"}, Data: map[string]string{"main.tf": `variable "a" {}`, ".terraform.lock.hcl": randomLock("3.9.0")}},
	}
	newer := randomLock("3.10.0")
	cases := map[string]struct {
		source, lock, offered string
		want                  string
	}{
		"an upgrade is offered":                {"plain", randomLock("3.9.0"), "", newer},
		"the class runs those versions":        {"plain", newer, "", ""},
		"the class was offered them already":   {"plain", randomLock("3.9.0"), newer, newer},
		"a module that ships its lock is kept": {"locked", randomLock("3.9.0"), "", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			class := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "pets"}}
			class.SpecTemplate.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: tc.source}}
			class.Status.ProviderLock, class.Status.ProviderUpgrade = tc.lock, tc.offered
			c := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(append([]client.Object{class}, modules...)...).WithStatusSubresource(class).Build()
			mg := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "m"}}
			mg.Spec.ClassRef = &common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: "pets", Namespace: "admin"}
			if err := offerClassUpgrade(ctx, c, &modsource.Loader{}, mg, []byte(newer)); err != nil {
				t.Fatal(err)
			}
			got := &terraformv1.ModuleClass{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(class), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.ProviderUpgrade != tc.want {
				t.Errorf("offered %q, want %q", got.Status.ProviderUpgrade, tc.want)
			}
		})
	}
}
