package revision

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
)

func s3Class(edit func(*awsstoragev1.S3BucketClass)) *awsstoragev1.S3BucketClass {
	c := &awsstoragev1.S3BucketClass{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "s3", UID: "class-uid"}}
	c.SpecTemplate.ProviderRef = &common.LocalReference{Name: "aws"}
	c.SpecTemplate.ForProvider.Encryption = "aws:kms"
	if edit != nil {
		edit(c)
	}
	return c
}

func mod(t *testing.T, main, lock string) *module.Module {
	t.Helper()
	files := map[string][]byte{"main.tf": []byte(main)}
	if lock != "" {
		files[module.LockFile] = []byte(lock)
	}
	m, err := module.FromFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBuild: a revision's name follows the class's template, module files and lock, and
// not how resources follow revisions; it keeps what it was built from.
func TestBuild(t *testing.T) {
	gvk := awsstoragev1.GroupVersion.WithKind("S3BucketClass")
	pcs := func(spec string) []terraformv1.RevisionProviderConfig {
		return []terraformv1.RevisionProviderConfig{{Name: "aws", Spec: &apiextensionsv1.JSON{Raw: []byte(spec)}}}
	}
	base, err := Build(s3Class(nil), gvk, mod(t, `variable "a" {}`, "lock-a"), pcs(`{"region":"eu-west-1"}`), 3)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		class     *awsstoragev1.S3BucketClass
		mod       *module.Module
		providers string
		same      bool
	}{
		"nothing changed":             {s3Class(nil), mod(t, `variable "a" {}`, "lock-a"), `{"region":"eu-west-1"}`, true},
		"the revision policy changed": {s3Class(func(c *awsstoragev1.S3BucketClass) { c.SpecTemplate.RevisionPolicy = common.RevisionManual }), mod(t, `variable "a" {}`, "lock-a"), `{"region":"eu-west-1"}`, true},
		"the class's status changed":  {s3Class(func(c *awsstoragev1.S3BucketClass) { c.Status.LatestRevision = "x" }), mod(t, `variable "a" {}`, "lock-a"), `{"region":"eu-west-1"}`, true},
		"an input of the template":    {s3Class(func(c *awsstoragev1.S3BucketClass) { c.SpecTemplate.ForProvider.Encryption = "AES256" }), mod(t, `variable "a" {}`, "lock-a"), `{"region":"eu-west-1"}`, false},
		"the reclaim policy":          {s3Class(func(c *awsstoragev1.S3BucketClass) { c.SpecTemplate.ReclaimPolicy = common.ReclaimRetain }), mod(t, `variable "a" {}`, "lock-a"), `{"region":"eu-west-1"}`, false},
		"a module file":               {s3Class(nil), mod(t, `variable "b" {}`, "lock-a"), `{"region":"eu-west-1"}`, false},
		"the module's lock":           {s3Class(nil), mod(t, `variable "a" {}`, "lock-b"), `{"region":"eu-west-1"}`, false},
		"a ProviderConfig's spec":     {s3Class(nil), mod(t, `variable "a" {}`, "lock-a"), `{"region":"eu-west-2"}`, false},
		"another class of that name":  {s3Class(func(c *awsstoragev1.S3BucketClass) { c.Name = "s3-other" }), mod(t, `variable "a" {}`, "lock-a"), `{"region":"eu-west-1"}`, false},
	}
	for name, tc := range cases {
		rev, err := Build(tc.class, gvk, tc.mod, pcs(tc.providers), 3)
		if err != nil {
			t.Fatal(err)
		}
		if (rev.Name == base.Name) != tc.same {
			t.Errorf("%s: revision %s, base %s; want same=%v", name, rev.Name, base.Name, tc.same)
		}
	}
	var tmpl map[string]any
	if err := json.Unmarshal(base.Spec.Template.Raw, &tmpl); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"providerRef": map[string]any{"name": "aws"}, "forProvider": map[string]any{"encryption": "aws:kms"}}
	if diff := cmp.Diff(want, tmpl); diff != "" {
		t.Errorf("template (-want +got):\n%s", diff)
	}
	got, err := NewModules(0).Module(base)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Files["main.tf"]) != `variable "a" {}` || string(got.Lock) != "lock-a" || base.Spec.Revision != 3 ||
		base.Labels[ClassLabel] != "class-uid" || !strings.HasPrefix(base.Name, "s3-") || base.Spec.ClassRef.Kind != "S3BucketClass" {
		t.Errorf("revision %s (%d, labels %v, class %+v): module %v, lock %q", base.Name, base.Spec.Revision, base.Labels, base.Spec.ClassRef, got.Files, got.Lock)
	}
	if long := Name(strings.Repeat("c", 300), "0123456789"); len(long) != 253 || !strings.HasSuffix(long, "-0123456789") {
		t.Errorf("a long class's revision name is %d characters: %s", len(long), long)
	}
}

// TestOverlay: a class at a revision has the revision's template and its own revision
// policy, name and status.
func TestOverlay(t *testing.T) {
	gvk := awsstoragev1.GroupVersion.WithKind("S3BucketClass")
	old, err := Build(s3Class(func(c *awsstoragev1.S3BucketClass) { c.SpecTemplate.ForProvider.Encryption = "AES256" }), gvk, mod(t, `variable "a" {}`, ""), nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	now := s3Class(func(c *awsstoragev1.S3BucketClass) {
		c.SpecTemplate.RevisionPolicy = common.RevisionManual
		c.Status.LatestRevision = "s3-new"
	})
	reg := kinds.NewRegistry(nil)
	mk, _ := reg.ManagedForClass(gvk)
	got, err := Overlay(now, old, mk.NewClass)
	if err != nil {
		t.Fatal(err)
	}
	at := got.(*awsstoragev1.S3BucketClass)
	if at.SpecTemplate.ForProvider.Encryption != "AES256" || at.SpecTemplate.RevisionPolicy != common.RevisionManual ||
		at.Name != "s3" || at.Status.LatestRevision != "s3-new" || at.SpecTemplate.ProviderRef.Name != "aws" {
		t.Errorf("class at the revision: %+v", at)
	}
	if now.SpecTemplate.ForProvider.Encryption != "aws:kms" {
		t.Error("the class itself was changed")
	}
}

// TestGet: a revision is read when it is the class's; another class's, or none, is a
// RevisionNotFound user error.
func TestGet(t *testing.T) {
	gvk := awsstoragev1.GroupVersion.WithKind("S3BucketClass")
	rev, err := Build(s3Class(nil), gvk, mod(t, `variable "a" {}`, ""), nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(rev).Build()
	ctx := context.Background()
	mine := common.ClassReference{Kind: "S3BucketClass", Name: "s3"}
	if got, err := Get(ctx, c, "admin", rev.Name, mine); err != nil || got.Name != rev.Name {
		t.Errorf("Get = %v, %v", got, err)
	}
	for name, tc := range map[string]struct {
		rev   string
		class common.ClassReference
	}{
		"another class's": {rev.Name, common.ClassReference{Kind: "S3BucketClass", Name: "other"}},
		"another kind's":  {rev.Name, common.ClassReference{Kind: "RDSInstanceClass", Name: "s3"}},
		"none":            {"s3-missing", mine},
	} {
		_, err := Get(ctx, c, "admin", tc.rev, tc.class)
		if u, ok := resource.AsUserError(err); !ok || u.Reason != ReasonRevisionNotFound {
			t.Errorf("%s: %v, want a %s user error", name, err, ReasonRevisionNotFound)
		}
	}
}

// TestSteeringChanged: a class's status write steers its resources only when it changes
// its conditions, its latest revision or whom the rollout lets on; counts do not.
func TestSteeringChanged(t *testing.T) {
	base := func() *awsstoragev1.S3BucketClass {
		return s3Class(func(c *awsstoragev1.S3BucketClass) {
			c.Generation = 1
			c.Status.LatestRevision = "s3-2"
			c.Status.Revisions = []common.RevisionCount{{Name: "s3-2", Revision: 2, Resources: 3, Ready: 2}}
			c.Status.Rollout = &common.RolloutStatus{Revision: "s3-2", Admitted: []string{"a"}, Updated: 1, Total: 5}
			resource.SetCondition(&c.Status.Conditions, 1, common.TypeRolloutPaused, metav1.ConditionFalse, common.ReasonRolloutProgressing, "runs on 1 of 5")
		})
	}
	for name, tc := range map[string]struct {
		edit func(c *awsstoragev1.S3BucketClass)
		want bool
	}{
		"nothing": {func(*awsstoragev1.S3BucketClass) {}, false},
		"counts": {func(c *awsstoragev1.S3BucketClass) {
			c.Status.Revisions[0].Ready, c.Status.Rollout.Updated = 3, 2
			c.Status.Conditions[0].Message = "runs on 2 of 5"
		}, false},
		"an edit":        {func(c *awsstoragev1.S3BucketClass) { c.Generation = 2 }, true},
		"a new revision": {func(c *awsstoragev1.S3BucketClass) { c.Status.LatestRevision = "s3-3" }, true},
		"the next wave": {func(c *awsstoragev1.S3BucketClass) {
			c.Status.Rollout.Admitted = append(c.Status.Rollout.Admitted, "b")
		}, true},
		"rollout complete": {func(c *awsstoragev1.S3BucketClass) { c.Status.Rollout.CompletedAt = &metav1.Time{} }, true},
		"not Ready": {func(c *awsstoragev1.S3BucketClass) {
			resource.SetCondition(&c.Status.Conditions, 1, common.TypeReady, metav1.ConditionFalse, "ProviderNotConfigured", "no provider")
		}, true},
	} {
		t.Run(name, func(t *testing.T) {
			after := base()
			tc.edit(after)
			if got := SteeringChanged(base(), after); got != tc.want {
				t.Errorf("SteeringChanged = %v; want %v", got, tc.want)
			}
		})
	}
}

// TestFirstDue: a class is due its first revision while it has none and one may be made:
// any bundled class at once, a ModuleClass once Ready.
func TestFirstDue(t *testing.T) {
	ready := &terraformv1.ModuleClass{}
	ready.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionTrue}}
	for name, tc := range map[string]struct {
		class Class
		want  bool
	}{
		"a bundled class without revisions": {s3Class(nil), true},
		"a bundled class with one":          {s3Class(func(c *awsstoragev1.S3BucketClass) { c.Status.LatestRevision = "s3-1" }), false},
		"a ModuleClass not Ready":           {&terraformv1.ModuleClass{}, false},
		"a Ready ModuleClass without any":   {ready, true},
	} {
		if got := FirstDue(tc.class); got != tc.want {
			t.Errorf("%s: FirstDue = %v, want %v", name, got, tc.want)
		}
	}
}
