package engine

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"unsafe"

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

// handlePool keeps each workspace's terraform-exec handle between verbs. A verb takes
// the handle and puts it back, so two verbs never share one. A new handle is given the
// binary's version, read once when the engine starts (known): terraform-exec would
// otherwise run `terraform version` before each handle's first command, a terraform
// process per workspace and controller run (a fifth of a create's terraform CPU).
type handlePool struct {
	mu    sync.Mutex
	free  map[string]*tfexec.Terraform
	known *version.Version
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
	if p.known != nil {
		knowVersion(tf, p.known)
	}
	return tf, nil
}

// knowVersion gives a new handle the binary's version, as its own first `terraform
// version` would have: terraform-exec keeps it in an unexported field and offers no
// setter. Should the field change, the handle asks the binary as before
// (TestHandlesKnowTheVersion fails then).
func knowVersion(tf *tfexec.Terraform, v *version.Version) {
	f := reflect.ValueOf(tf).Elem().FieldByName("execVersion")
	if !f.IsValid() || f.Type() != reflect.TypeOf(v) {
		return
	}
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(v))
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
