package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-exec/tfexec"
)

// terraformVersion asks the binary for its version once, in dir.
func terraformVersion(ctx context.Context, execPath, dir string) (*version.Version, error) {
	tf, err := tfexec.NewTerraform(dir, execPath)
	if err != nil {
		return nil, fmt.Errorf("terraform: %w", err)
	}
	v, _, err := tf.Version(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("terraform version: %w", err)
	}
	return v, nil
}

// handlePool keeps each workspace's terraform-exec handle between verbs. A handle asks
// the binary for its version before its first -json command and remembers it, so a
// workspace pays for `terraform version` once per controller run, not once per
// reconcile. A verb takes the handle and puts it back, so two verbs never share one.
type handlePool struct {
	mu   sync.Mutex
	free map[string]*tfexec.Terraform
}

// take returns workspace id's idle handle, or a new one for dir.
func (p *handlePool) take(id, dir, execPath string) (*tfexec.Terraform, error) {
	p.mu.Lock()
	tf, ok := p.free[id]
	delete(p.free, id)
	p.mu.Unlock()
	if ok {
		return tf, nil
	}
	tf, err := tfexec.NewTerraform(dir, execPath)
	if err != nil {
		return nil, fmt.Errorf("terraform: %w", err)
	}
	return tf, nil
}

// put keeps tf as workspace id's idle handle.
func (p *handlePool) put(id string, tf *tfexec.Terraform) {
	if tf == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.free == nil {
		p.free = map[string]*tfexec.Terraform{}
	}
	p.free[id] = tf
}

// forget drops workspace id's handle.
func (p *handlePool) forget(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.free, id)
}
