package engine

import (
	"context"
	"fmt"
	"reflect"
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

// seedVersion hands a new terraform-exec handle the version the engine already knows.
// Without it the handle runs `terraform version -json` before its first -json command (one
// extra process per reconcile). terraform-exec has no setter, so the cached field is set
// directly; if its layout ever changes, seedVersion reports false and the handle asks the
// binary as before.
func seedVersion(tf *tfexec.Terraform, v *version.Version) bool {
	if tf == nil || v == nil {
		return false
	}
	f := reflect.ValueOf(tf).Elem().FieldByName("execVersion")
	if !f.IsValid() || f.Type() != reflect.TypeOf(v) {
		return false
	}
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(v))
	return true
}
