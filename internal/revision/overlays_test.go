package revision

import (
	"testing"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
)

// TestOverlays: the same versions of a class and a revision give an equal overlay, as a
// copy the caller may change; a new version of either makes the overlay again.
func TestOverlays(t *testing.T) {
	gvk := awsstoragev1.GroupVersion.WithKind("S3BucketClass")
	old, err := Build(s3Class(func(c *awsstoragev1.S3BucketClass) { c.SpecTemplate.ForProvider.Encryption = "AES256" }), gvk, mod(t, `variable "a" {}`, ""), nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	old.ResourceVersion = "7"
	now := s3Class(func(c *awsstoragev1.S3BucketClass) {
		c.UID, c.ResourceVersion = "u-1", "40"
		c.SpecTemplate.RevisionPolicy = common.RevisionManual
	})
	mk, _ := kinds.NewRegistry(nil).ManagedForClass(gvk)
	var o Overlays
	encryption := func() string {
		t.Helper()
		got, err := o.Overlay(now, old, mk.NewClass)
		if err != nil {
			t.Fatal(err)
		}
		at := got.(*awsstoragev1.S3BucketClass)
		enc := at.SpecTemplate.ForProvider.Encryption
		at.SpecTemplate.ForProvider.Encryption = "changed by the caller"
		return enc
	}
	if first, again := encryption(), encryption(); first != "AES256" || again != "AES256" {
		t.Errorf("the class at the revision twice: %q, %q; want AES256 both times", first, again)
	}
	old.ResourceVersion = "8"
	old.Spec.Template.Raw = []byte(`{"forProvider":{"encryption":"aws:kms"}}`)
	if got := encryption(); got != "aws:kms" {
		t.Errorf("a new version of the revision: %q, want aws:kms", got)
	}
	now.ResourceVersion = "41"
	now.SpecTemplate.ForProvider.Encryption = "none"
	old.Spec.Template.Raw = []byte(`{"forProvider":{"encryption":"AES256"}}`)
	if got := encryption(); got != "AES256" {
		t.Errorf("a new version of the class: %q, want AES256 from the revision", got)
	}
}
