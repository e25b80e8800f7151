package classrevision

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/revision"
)

// lockOf is a dependency lock holding random at version v.
func lockOf(v string) string {
	return "provider \"registry.terraform.io/hashicorp/random\" {\n  version = \"" + v + "\"\n}\n"
}

// TestRevisionLock: a new revision keeps the module's own lock, else a ModuleClass's
// offered upgrade, else its newest revision's lock; the offer becomes the class's lock
// once its newest revision carries it.
func TestRevisionLock(t *testing.T) {
	mc := func(upgrade string) *terraformv1.ModuleClass {
		c := &terraformv1.ModuleClass{}
		c.Status.ProviderLock, c.Status.ProviderUpgrade = lockOf("3.9.0"), upgrade
		return c
	}
	rev := func(lock string) []terraformv1.ClassRevision {
		return []terraformv1.ClassRevision{{Spec: terraformv1.ClassRevisionSpec{Revision: 1}}, {Spec: terraformv1.ClassRevisionSpec{Revision: 2, ProviderLock: lock}}}
	}
	own, none := &module.Module{Lock: []byte("own")}, &module.Module{}
	for _, tc := range []struct {
		name  string
		class revision.Class
		mod   *module.Module
		revs  []terraformv1.ClassRevision
		want  string
	}{
		{"a bundled class keeps its module's", &awsstoragev1.S3BucketClass{}, own, nil, "own"},
		{"a module that ships a lock keeps it, offer or not", mc(lockOf("3.10.0")), own, rev(lockOf("3.10.0")), "own"},
		{"an offered upgrade", mc(lockOf("3.10.0")), none, rev(""), lockOf("3.10.0")},
		{"a past upgrade carries on", mc(""), none, rev(lockOf("3.10.0")), lockOf("3.10.0")},
		{"none: each resource keeps its own", mc(""), none, rev(""), ""},
		{"no revision yet", mc(""), none, nil, ""},
	} {
		if got := string(revisionLock(tc.class, tc.mod, tc.revs)); got != tc.want {
			t.Errorf("%s: lock %q, want %q", tc.name, got, tc.want)
		}
	}

	class := mc(lockOf("3.10.0"))
	tookUpgrade(class, &terraformv1.ClassRevision{Spec: terraformv1.ClassRevisionSpec{ProviderLock: lockOf("3.9.0")}})
	if class.Status.ProviderUpgrade == "" {
		t.Error("an upgrade no revision carries yet was taken")
	}
	tookUpgrade(class, &terraformv1.ClassRevision{Spec: terraformv1.ClassRevisionSpec{ProviderLock: lockOf("3.10.0")}})
	if class.Status.ProviderUpgrade != "" || class.Status.ProviderLock != lockOf("3.10.0") {
		t.Errorf("taken: lock %q, upgrade %q; want the upgrade as the lock", class.Status.ProviderLock, class.Status.ProviderUpgrade)
	}
}

// TestProviderCounts: the fleet counted by the provider versions its resources run.
func TestProviderCounts(t *testing.T) {
	mg := func(lock string) member {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Name: "m"}}
		m.Status.Terraform.ProviderLock = lock
		return memberOf(m)
	}
	fleet := []member{mg(lockOf("3.9.0")), mg(lockOf("3.10.0")), mg(lockOf("3.9.0")), mg(""), mg("not a lock {")}
	want := []common.ProviderVersionCount{{Provider: "hashicorp/random", Version: "3.10.0", Resources: 1}, {Provider: "hashicorp/random", Version: "3.9.0", Resources: 2}}
	if diff := cmp.Diff(want, providerCounts(fleet)); diff != "" {
		t.Errorf("provider counts (-want +got):\n%s", diff)
	}
}
