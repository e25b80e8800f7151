package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/revision"
)

const bucketTF = `
variable "bucket_name" { type = string }
variable "region" {
  type    = string
  default = "us-east-1"
}
variable "tags" {
  type    = map(string)
  default = {}
}
variable "retention_days" {
  type    = number
  default = 1
}
variable "password" {
  type    = string
  default = ""
}
`

// kind is a bundled-module kind whose Provider contributes pc.
func kind(pc *registry.ProviderConfig) *registry.ManagedKind {
	return &registry.ManagedKind{
		GVK:         schema.GroupVersionKind{Group: "storage.example.org", Version: "v1alpha1", Kind: "Bucket"},
		ProviderGVK: schema.GroupVersionKind{Group: "example.org", Version: "v1alpha1", Kind: "Provider"},
		Terraform: &registry.TerraformKind{
			Modules:   fstest.MapFS{"modules/bucket/main.tf": {Data: []byte(bucketTF)}},
			ModuleDir: "modules/bucket",
			ResolveProvider: func(context.Context, client.Client, resource.Managed) (*registry.ProviderConfig, error) {
				return pc, nil
			},
		},
	}
}

func managed(forProvider string) *terraformv1.Module {
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "logs", UID: "0a1b-2c3d"}}
	m.Spec.ForProvider = &apiextensionsv1.JSON{Raw: []byte(forProvider)}
	return m
}

// vars is the workspace's tfvars file, decoded.
func vars(t *testing.T, ws *Rendered) map[string]any {
	t.Helper()
	out := map[string]any{}
	if err := json.Unmarshal(ws.Files[render.VarsFile], &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRenderInputs: where each module input comes from, and which win.
func TestRenderInputs(t *testing.T) {
	cases := map[string]struct {
		forProvider string
		edit        func(*registry.ManagedKind, *registry.ProviderConfig)
		wantVars    map[string]any
		wantSecret  map[string]any
	}{
		"camelCase fields become snake_case variables": {
			forProvider: `{"bucketName": "logs", "retentionDays": 7}`,
			wantVars:    map[string]any{"bucket_name": "logs", "retention_days": float64(7)},
		},
		"forProvider keys are variable names already": {
			forProvider: `{"bucket_name": "logs"}`,
			edit:        func(k *registry.ManagedKind, _ *registry.ProviderConfig) { k.Terraform.InputsAreVariables = true },
			wantVars:    map[string]any{"bucket_name": "logs"},
		},
		"the Provider's inputs the module declares, and no others": {
			forProvider: `{"bucketName": "logs"}`,
			edit: func(_ *registry.ManagedKind, pc *registry.ProviderConfig) {
				pc.Inputs = map[string]any{"region": "eu-west-1", "project": "p"}
			},
			wantVars: map[string]any{"bucket_name": "logs", "region": "eu-west-1"},
		},
		"what is observed wins over the Provider and forProvider": {
			forProvider: `{"bucketName": "logs", "region": "us-east-2"}`,
			edit: func(k *registry.ManagedKind, pc *registry.ProviderConfig) {
				pc.Inputs = map[string]any{"region": "eu-west-1"}
				k.Terraform.ObserveInputs = func(context.Context, resource.Managed, *registry.ProviderConfig) (map[string]any, error) {
					return map[string]any{"region": "ap-south-1", "undeclared": "x"}, nil
				}
			},
			wantVars: map[string]any{"bucket_name": "logs", "region": "ap-south-1"},
		},
		"variables from ConfigMaps take the variable's type, those from Secrets stay out of the files": {
			forProvider: `{"bucketName": "logs"}`,
			edit: func(k *registry.ManagedKind, _ *registry.ProviderConfig) {
				k.Terraform.ResolveVariables = func(context.Context, client.Client, resource.Managed) (*registry.Variables, error) {
					return &registry.Variables{Plain: map[string]string{"retention_days": "30", "tags": `{"team": "a"}`, "region": "3"},
						Secret: map[string]string{"password": "s3cret"}}, nil
				}
			},
			wantVars:   map[string]any{"bucket_name": "logs", "retention_days": float64(30), "tags": map[string]any{"team": "a"}, "region": "3"},
			wantSecret: map[string]any{"password": "s3cret"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pc := &registry.ProviderConfig{}
			k := kind(pc)
			if tc.edit != nil {
				tc.edit(k, pc)
			}
			r, err := NewRenderer(nil, k, "", "")
			if err != nil {
				t.Fatal(err)
			}
			ws, err := r.Render(context.Background(), managed(tc.forProvider))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantVars, vars(t, ws)); diff != "" {
				t.Errorf("tfvars (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSecret, ws.SecretVars, cmpEmpty); diff != "" {
				t.Errorf("secret variables (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpEmpty = cmp.FilterValues(func(a, b map[string]any) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

// TestRenderWorkspace: the workspace's identity, group, environment and backend.
func TestRenderWorkspace(t *testing.T) {
	pc := &registry.ProviderConfig{Env: map[string]string{"AWS_SECRET_ACCESS_KEY": "k"}}
	r, err := NewRenderer(nil, kind(pc), "/etc/kube/a:/etc/kube/b", "state")
	if err != nil {
		t.Fatal(err)
	}
	mg := managed(`{"bucketName": "logs"}`)
	mg.Spec.ProviderRef = &common.LocalReference{Name: "prod"}
	mg.Spec.Imports = []common.ImportInstruction{{Address: "aws_s3_bucket.this", ID: "logs"}}
	mg.Spec.Timeout = &metav1.Duration{Duration: 45 * time.Minute}
	ws, err := r.Render(context.Background(), mg)
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		ID, Kind, Name, Group string
		Timeout               time.Duration
		Env                   map[string]string
		BackendConfig         map[string]string
		Files                 []string
		Provider              *registry.ProviderConfig
	}
	got := view{ws.ID, ws.Kind, ws.Name, ws.Group, ws.Timeout, ws.Env, ws.BackendConfig, nil, ws.Provider}
	for f := range ws.Files {
		got.Files = append(got.Files, f)
	}
	want := view{ID: "0a1b-2c3d", Kind: "Bucket.storage.example.org", Name: "team-a/logs", Group: "example.org/team-a/prod", Timeout: 45 * time.Minute,
		Env: pc.Env, BackendConfig: map[string]string{"secret_suffix": "0a1b2c3d", "namespace": "team-a"},
		Files: []string{"main.tf.json", "module/main.tf", "terraform.tfvars.json"}, Provider: pc}
	if diff := cmp.Diff(want, got, cmpSorted); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var root struct {
		Terraform map[string]map[string]map[string]any `json:"terraform"`
		Import    []map[string]any                     `json:"import"`
	}
	if err := json.Unmarshal(ws.Files[render.RootFile], &root); err != nil {
		t.Fatal(err)
	}
	backend := root.Terraform["backend"]["kubernetes"]
	if diff := cmp.Diff(map[string]any{"config_paths": []any{"/etc/kube/a", "/etc/kube/b"}, "config_context": "state"}, backend); diff != "" {
		t.Errorf("backend block (-want +got):\n%s", diff)
	}
	if len(root.Import) != 1 || root.Import[0]["to"] != "module.this.aws_s3_bucket.this" {
		t.Errorf("import blocks: %v", root.Import)
	}

	hash := ws.Hash
	mg.Spec.ProviderRef, mg.Spec.Timeout = nil, nil
	if ws, _ := r.Render(context.Background(), mg); ws.Group != "example.org/team-a" || ws.Timeout != 0 {
		t.Errorf("without providerRef and timeout, group %q, timeout %s; want example.org/team-a and none (the engine's)", ws.Group, ws.Timeout)
	}
	mg.Spec.ProviderRef = &common.LocalReference{Name: "prod"}
	if ws, _ := r.Render(context.Background(), mg); ws.Hash != hash {
		t.Error("the timeout changes the inputs hash: a new timeout would run terraform")
	}
}

var cmpSorted = cmp.Transformer("sorted", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

// TestRenderErrors: what a user must fix is a user error; the rest passes through.
func TestRenderErrors(t *testing.T) {
	boom := errors.New("boom")
	cases := map[string]struct {
		forProvider string
		edit        func(*registry.ManagedKind)
		reason      string // of the user error; empty: err is boom
	}{
		"forProvider is no object":       {forProvider: `[1]`, reason: "InvalidForProvider"},
		"forProvider names no variable":  {forProvider: `{"bucketName": "a", "colour": "red"}`, reason: "InvalidForProvider"},
		"a required variable is missing": {forProvider: `{}`, reason: "InvalidForProvider"},
		"the Provider cannot be resolved": {forProvider: `{"bucketName": "a"}`, edit: func(k *registry.ManagedKind) {
			k.Terraform.ResolveProvider = func(context.Context, client.Client, resource.Managed) (*registry.ProviderConfig, error) {
				return nil, boom
			}
		}},
		"the observation fails": {forProvider: `{"bucketName": "a"}`, edit: func(k *registry.ManagedKind) {
			k.Terraform.ObserveInputs = func(context.Context, resource.Managed, *registry.ProviderConfig) (map[string]any, error) {
				return nil, boom
			}
		}},
		"a variable cannot be read": {forProvider: `{"bucketName": "a"}`, edit: func(k *registry.ManagedKind) {
			k.Terraform.ResolveVariables = func(context.Context, client.Client, resource.Managed) (*registry.Variables, error) { return nil, boom }
		}},
		"the module cannot be loaded": {forProvider: `{"bucketName": "a"}`, edit: func(k *registry.ManagedKind) {
			k.Terraform.LoadModule = func(context.Context, client.Client, resource.Managed) (*module.Module, error) { return nil, boom }
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			k := kind(&registry.ProviderConfig{})
			if tc.edit != nil {
				tc.edit(k)
			}
			r, err := NewRenderer(nil, k, "", "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Render(context.Background(), managed(tc.forProvider))
			u, isUser := resource.AsUserError(err)
			switch {
			case tc.reason == "" && !errors.Is(err, boom):
				t.Errorf("err = %v, want boom passed through", err)
			case tc.reason != "" && (!isUser || u.Reason != tc.reason):
				t.Errorf("err = %v, want user error %s", err, tc.reason)
			}
		})
	}
}

// TestModuleChoice: a kind with a loader renders the module it picks per resource; a
// bundled module that cannot be read stops the renderer from being made.
func TestModuleChoice(t *testing.T) {
	k := kind(&registry.ProviderConfig{})
	k.Terraform.Modules, k.Terraform.ModuleDir = nil, ""
	k.Terraform.LoadModule = func(_ context.Context, _ client.Client, mg resource.Managed) (*module.Module, error) {
		return module.FromFiles(map[string][]byte{"main.tf": []byte(`variable "name" {}`)})
	}
	r, err := NewRenderer(nil, k, "", "")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := r.Render(context.Background(), managed(`{"name": "n"}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`variable "name" {}`, string(ws.Files["module/main.tf"])); diff != "" {
		t.Errorf("module file (-want +got):\n%s", diff)
	}
	broken := kind(nil)
	broken.Terraform.ModuleDir = "modules/none"
	if _, err := NewRenderer(nil, broken, "", ""); err == nil {
		t.Error("NewRenderer with a module directory that does not exist: no error")
	}
}

// TestRenderLock: a resource runs with the lock its state was last written with; one that
// never ran, with its module's; without either, with none.
func TestRenderLock(t *testing.T) {
	cases := map[string]struct {
		module, status, want string
	}{
		"the resource's own lock":          {module: "module lock", status: "resource lock", want: "resource lock"},
		"the module's, before a first run": {module: "module lock", want: "module lock"},
		"none":                             {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			k := kind(&registry.ProviderConfig{})
			k.Terraform.Modules, k.Terraform.ModuleDir = nil, ""
			k.Terraform.LoadModule = func(context.Context, client.Client, resource.Managed) (*module.Module, error) {
				files := map[string][]byte{"main.tf": []byte(`variable "name" {}`)}
				if tc.module != "" {
					files[module.LockFile] = []byte(tc.module)
				}
				return module.FromFiles(files)
			}
			r, err := NewRenderer(nil, k, "", "")
			if err != nil {
				t.Fatal(err)
			}
			mg := managed(`{"name": "n"}`)
			mg.Status.Terraform.ProviderLock = tc.status
			ws, err := r.Render(context.Background(), mg)
			if err != nil {
				t.Fatal(err)
			}
			if string(ws.Lock) != tc.want || tc.want == "" && ws.Lock != nil {
				t.Errorf("lock %q, want %q", ws.Lock, tc.want)
			}
			if _, inFiles := ws.Files["module/"+module.LockFile]; inFiles {
				t.Error("the lock was copied into the module's files")
			}
		})
	}
}

// TestRenderRevision: a resource made from a class renders its revision's module and lock,
// not the module the kind bundles now (a Terraplane upgrade that changed it makes a new
// revision, which reaches the resource only when it moves); a revision of another class
// is refused, and a resource being deleted whose revision is gone renders the live module.
func TestRenderRevision(t *testing.T) {
	ctx := context.Background()
	k := kind(&registry.ProviderConfig{})
	k.ClassGVK = schema.GroupVersionKind{Group: "storage.example.org", Version: "v1alpha1", Kind: "BucketClass"}
	old, err := module.FromFiles(map[string][]byte{"main.tf": []byte(`variable "bucket_name" {}`), module.LockFile: []byte("old lock")})
	if err != nil {
		t.Fatal(err)
	}
	class := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "standard", UID: "c"}}
	rev, err := revision.Build(class, k.ClassGVK, old, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(rev).Build()
	r, err := NewRenderer(c, k, "", "")
	if err != nil {
		t.Fatal(err)
	}
	mg := managed(`{"bucketName": "logs"}`)
	mg.Spec.ClassRef = &common.ClassReference{APIVersion: "storage.example.org/v1alpha1", Kind: "BucketClass", Name: "standard"}
	mg.Spec.Revision = rev.Name
	ws, err := r.Render(ctx, mg)
	if err != nil {
		t.Fatal(err)
	}
	if string(ws.Files["module/main.tf"]) != `variable "bucket_name" {}` || string(ws.Lock) != "old lock" || ws.Revision != rev.Name {
		t.Errorf("rendered %q with lock %q from revision %q; want the revision's module", ws.Files["module/main.tf"], ws.Lock, ws.Revision)
	}
	mg.Spec.ClassRef.Name = "premium"
	if _, err := r.Render(ctx, mg); !isUser(err, revision.ReasonRevisionNotFound) {
		t.Errorf("a revision of another class: %v", err)
	}
	mg.Spec.ClassRef.Name, mg.Spec.Revision = "standard", "standard-gone"
	if _, err := r.Render(ctx, mg); !isUser(err, revision.ReasonRevisionNotFound) {
		t.Errorf("a revision that is gone: %v", err)
	}
	mg.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if ws, err := r.Render(ctx, mg); err != nil || ws.Revision != "" || string(ws.Files["module/main.tf"]) != bucketTF {
		t.Errorf("a resource being deleted whose revision is gone: %v, revision %q", err, ws.Revision)
	}
}

// isUser reports whether err is a user error with reason.
func isUser(err error, reason string) bool {
	u, ok := resource.AsUserError(err)
	return ok && u.Reason == reason
}
