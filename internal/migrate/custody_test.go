package migrate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
)

func tools(t *testing.T, objs ...client.Object) Tools {
	t.Helper()
	reg := kinds.NewRegistry(nil)
	return Tools{Client: fake.NewClientBuilder().WithScheme(reg.Scheme()).WithObjects(objs...).Build(), Registry: reg}
}

// TestReadModule: variable files and the lock file stay behind, local calls inside the
// directory travel with it, and a call out of it is refused.
func TestReadModule(t *testing.T) {
	cases := map[string]struct {
		files     map[string]string
		wantFiles []string
		wantErr   string
	}{
		"variable files stay behind": {map[string]string{
			"main.tf": `variable "name" {}`, "terraform.tfvars": `name = "x"`, "x.auto.tfvars.json": `{}`, ".terraform.lock.hcl": "# lock",
		}, []string{"main.tf"}, ""},
		"a local call travels": {map[string]string{
			"main.tf": `module "net" { source = "./modules/net" }`, "modules/net/main.tf": `output "id" { value = 1 }`,
		}, []string{"main.tf", "modules/net/main.tf"}, ""},
		"a call out of the directory": {map[string]string{"main.tf": `module "up" { source = "../shared" }`}, nil, `calls ../shared, outside`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for f, content := range tc.files {
				p := filepath.Join(dir, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			mod, err := readModule(dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("readModule = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for f := range mod.Files {
				got = append(got, f)
			}
			sort.Strings(got)
			if diff := cmp.Diff(tc.wantFiles, got); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := readModule(filepath.Join(t.TempDir(), "absent")); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a missing directory: %v", err)
	}
}

// TestModuleConfigMap: a flat module is one key per file; one with subdirectories is a
// single tarball that reads back to the same files.
func TestModuleConfigMap(t *testing.T) {
	flat := map[string][]byte{"main.tf": []byte("a"), "outputs.tf": []byte("b")}
	cm, err := moduleConfigMap("m-module", "admin", flat)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"main.tf": "a", "outputs.tf": "b"}, cm.Data); diff != "" || cm.BinaryData != nil || cm.Name != "m-module" || cm.Namespace != "admin" {
		t.Errorf("flat: %s/%s binary %v; data (-want +got):\n%s", cm.Namespace, cm.Name, cm.BinaryData, diff)
	}
	nested := map[string][]byte{"main.tf": []byte("a"), "modules/net/main.tf": []byte("c")}
	cm, err = moduleConfigMap("m-module", "admin", nested)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data != nil || len(cm.BinaryData) != 1 {
		t.Fatalf("nested: data %v, binary keys %d; want one tarball", cm.Data, len(cm.BinaryData))
	}
	back, err := modsource.ReadTarball(cm.BinaryData[modsource.TarballKey])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(nested, back); diff != "" {
		t.Errorf("tarball (-want +got):\n%s", diff)
	}
}

// TestCreatePaused: the Module is created paused and adopted, retained, from the module's
// ConfigMap, with the variable values as inputs, its ProviderConfigs, and a connection
// Secret only when a claim will read it.
func TestCreatePaused(t *testing.T) {
	ctx := context.Background()
	for _, claim := range []string{"", "Bucket/apps/b"} {
		t.Run(fmt.Sprintf("claim %q", claim), func(t *testing.T) {
			tl := tools(t)
			o := Options{Name: "legacy", Namespace: "admin", ProviderConfigs: []string{"aws", "aws-east"}, Claim: claim}
			mod := &module.Module{Files: map[string][]byte{"main.tf": []byte(`variable "name" {}`)}}
			mg, err := tl.createPaused(ctx, o, mod, map[string]any{"name": "db"})
			if err != nil {
				t.Fatal(err)
			}
			got := &terraformv1.Module{}
			if err := tl.Client.Get(ctx, client.ObjectKeyFromObject(mg), got); err != nil {
				t.Fatal(err)
			}
			if !resource.Paused(got) || !resource.Adopting(got) || got.Spec.ReclaimPolicy != common.ReclaimRetain {
				t.Errorf("annotations %v, reclaim %s; want paused, adopted, Retain", got.Annotations, got.Spec.ReclaimPolicy)
			}
			if src := got.Spec.Source.ConfigMap; src == nil || src.Name != "legacy-module" || string(got.Spec.ForProvider.Raw) != `{"name":"db"}` {
				t.Errorf("source %+v, forProvider %s", got.Spec.Source, got.Spec.ForProvider)
			}
			if diff := cmp.Diff([]common.LocalReference{{Name: "aws"}, {Name: "aws-east"}}, got.Spec.ProviderConfigRefs); diff != "" {
				t.Errorf("providerConfigRefs (-want +got):\n%s", diff)
			}
			if hasSecret := got.Spec.WriteConnectionSecretToRef != nil; hasSecret != (claim != "") {
				t.Errorf("connection secret %v, want one only for a claim", got.Spec.WriteConnectionSecretToRef)
			}
			if err := tl.Client.Get(ctx, client.ObjectKey{Namespace: "admin", Name: "legacy-module"}, &corev1.ConfigMap{}); err != nil {
				t.Errorf("module ConfigMap: %v", err)
			}
		})
	}
}

// TestCreateClaim: the claim binds statically to the Module, which is reserved for it;
// a malformed spec or an unknown kind is refused.
func TestCreateClaim(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct {
		spec    string
		wantErr string
	}{
		"a bucket":        {"bucket/apps/b", ""},
		"two parts":       {"Bucket/b", "want Kind/namespace/name"},
		"an unknown kind": {"Widget/apps/w", `no claim kind "Widget"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mg := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "legacy"}}
			tl := tools(t, mg)
			err := tl.createClaim(ctx, tc.spec, mg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("createClaim = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			claim := &storagev1.Bucket{}
			if err := tl.Client.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "b"}, claim); err != nil {
				t.Fatal(err)
			}
			wantRef := &common.ObjectReference{APIVersion: "terraform.terraplane.io/v1alpha1", Kind: "Module", Namespace: "admin", Name: "legacy"}
			if diff := cmp.Diff(wantRef, claim.Spec.ResourceRef); diff != "" || claim.Spec.WriteConnectionSecretToRef.Name != "b-connection" {
				t.Errorf("claim secret %v; resourceRef (-want +got):\n%s", claim.Spec.WriteConnectionSecretToRef, diff)
			}
			got := &terraformv1.Module{}
			if err := tl.Client.Get(ctx, client.ObjectKeyFromObject(mg), got); err != nil {
				t.Fatal(err)
			}
			wantClaim := &common.ObjectReference{APIVersion: "storage.terraplane.io/v1alpha1", Kind: "Bucket", Namespace: "apps", Name: "b"}
			if diff := cmp.Diff(wantClaim, got.Spec.ClaimRef); diff != "" {
				t.Errorf("module claimRef (-want +got):\n%s", diff)
			}
		})
	}
}

// TestManagedKind: a kind is found by Kind or Kind.group, whatever the case; an unknown
// one lists the known kinds.
func TestManagedKind(t *testing.T) {
	tl := tools(t)
	for in, want := range map[string]string{"S3Bucket": "S3Bucket", "s3bucket": "S3Bucket", "S3Bucket.storage.aws.terraplane.io": "S3Bucket", "module": "Module"} {
		k, err := tl.managedKind(in)
		if err != nil || k.GVK.Kind != want {
			t.Errorf("managedKind(%q) = %v, %v; want %s", in, k, err, want)
		}
	}
	_, err := tl.managedKind("Object") // native: not Terraform's to export
	if err == nil || !strings.Contains(err.Error(), "S3Bucket.storage.aws.terraplane.io") {
		t.Errorf("managedKind(Object) = %v, want an error listing the known kinds", err)
	}
}

// TestExportRefuses: only a retained resource is exported, so that deleting it afterwards
// destroys nothing; a missing one says so.
func TestExportRefuses(t *testing.T) {
	ctx := context.Background()
	b := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "b"}}
	b.Spec.ReclaimPolicy = common.ReclaimDelete
	tl := tools(t, b)
	if _, err := Export(ctx, tl, "S3Bucket", "admin", "b", t.TempDir()); err == nil || !strings.Contains(err.Error(), "set it to Retain first") {
		t.Errorf("Export of a Delete resource = %v", err)
	}
	if _, err := Export(ctx, tl, "S3Bucket", "admin", "absent", t.TempDir()); err == nil || !strings.Contains(err.Error(), "get S3Bucket admin/absent") {
		t.Errorf("Export of a missing resource = %v", err)
	}
	if _, err := Export(ctx, tl, "Gizmo", "admin", "b", t.TempDir()); err == nil || !strings.Contains(err.Error(), `no managed kind "Gizmo"`) {
		t.Errorf("Export of an unknown kind = %v", err)
	}
}
