package migrate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"k8s.io/apimachinery/pkg/types"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/workspace"
)

// Export writes a retained managed resource's workspace to dir with its state, so that
// plain terraform takes over: `terraform init && terraform plan` there shows no changes.
// It returns the environment variables (credentials) terraform will need; their values
// are not written.
func Export(ctx context.Context, t Tools, kindName, namespace, name, dir string) ([]string, error) {
	kind, err := t.managedKind(kindName)
	if err != nil {
		return nil, err
	}
	mg := kind.New()
	if err := t.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, mg); err != nil {
		return nil, fmt.Errorf("get %s %s/%s: %w", kind.GVK.Kind, namespace, name, err)
	}
	if mg.GetManagedSpec().ReclaimPolicy != common.ReclaimRetain {
		return nil, fmt.Errorf("%s %s/%s has reclaimPolicy %s; set it to Retain first, so that deleting it after the export destroys nothing",
			kind.GVK.Kind, namespace, name, mg.GetManagedSpec().ReclaimPolicy)
	}
	say := t.progress()
	say("rendering the workspace of %s %s/%s", kind.GVK.Kind, namespace, name)
	r, err := workspace.NewRenderer(t.Client, kind, t.StateKubeconfig, t.StateContext)
	if err != nil {
		return nil, err
	}
	ws, err := r.Render(ctx, mg)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	say("reading its state from the cluster (terraform init, terraform state pull)")
	state, err := t.Engine.PullState(ctx, ws.Workspace)
	if err != nil {
		return nil, err
	}
	r.LocalState = true
	local, err := r.Render(ctx, mg)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	files := local.Files
	files["terraform.tfstate"] = []byte(state)
	if local.Lock != nil {
		files[module.LockFile] = local.Lock // the provider versions the state was written with
	}
	say("writing %d files to %s", len(files), dir)
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, content, 0o600); err != nil {
			return nil, fmt.Errorf("write %s: %w", name, err)
		}
	}
	env := make([]string, 0, len(local.Env))
	for k := range local.Env {
		env = append(env, k)
	}
	sort.Strings(env)
	return env, nil
}
