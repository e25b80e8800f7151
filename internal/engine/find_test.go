package engine

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestFindTerraform finds terraform by default, a binary by name on PATH, and one by path.
func TestFindTerraform(t *testing.T) {
	want, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal("terraform is not on PATH; install terraform >= 1.5")
	}
	for _, arg := range []string{"", "terraform", want} {
		got, err := FindTerraform(arg)
		if err != nil {
			t.Fatalf("FindTerraform(%q): %v", arg, err)
		}
		if g, _ := filepath.EvalSymlinks(got); g != mustEval(t, want) {
			t.Errorf("FindTerraform(%q) = %s, want %s", arg, got, want)
		}
	}
	if _, err := FindTerraform("no-such-terraform"); err == nil {
		t.Error("FindTerraform(no-such-terraform) found something")
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
