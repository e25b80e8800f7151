package engine

import (
	"context"
	"testing"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-exec/tfexec"
)

// TestSeedVersion: a seeded handle knows its version without running the binary (here a
// path that does not exist), so a terraform-exec upgrade that moves the field fails here.
func TestSeedVersion(t *testing.T) {
	tf, err := tfexec.NewTerraform(t.TempDir(), "/nonexistent/terraform")
	if err != nil {
		t.Fatal(err)
	}
	want := version.Must(version.NewVersion("1.11.4"))
	if !seedVersion(tf, want) {
		t.Fatal("seedVersion found no version field in terraform-exec's handle")
	}
	got, _, err := tf.Version(context.Background(), false)
	if err != nil {
		t.Fatalf("the seeded handle ran the binary: %v", err)
	}
	if !got.Equal(want) {
		t.Errorf("version = %s, want %s", got, want)
	}
}
