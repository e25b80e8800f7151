package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestFindTerraform finds terraform by default, a binary by name on PATH, and one by path.
func TestFindTerraform(t *testing.T) {
	t.Setenv(TerraformEnv, "")
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

// TestFindTerraformFromEnv: with no name given, $TERRAPLANE_TERRAFORM names the binary
// (as the image sets it to tofu); a name given wins over it.
func TestFindTerraformFromEnv(t *testing.T) {
	dir := t.TempDir()
	tofu := filepath.Join(dir, "tofu")
	if err := os.WriteFile(tofu, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	for _, tc := range []struct{ env, arg, want string }{
		{env: "tofu", arg: "", want: tofu},
		{env: tofu, arg: "", want: tofu},
		{env: "no-such-binary", arg: tofu, want: tofu},
	} {
		t.Setenv(TerraformEnv, tc.env)
		got, err := FindTerraform(tc.arg)
		if err != nil {
			t.Errorf("FindTerraform(%q) with %s=%s: %v", tc.arg, TerraformEnv, tc.env, err)
			continue
		}
		if got != tc.want {
			t.Errorf("FindTerraform(%q) with %s=%s = %s, want %s", tc.arg, TerraformEnv, tc.env, got, tc.want)
		}
	}
	t.Setenv(TerraformEnv, "no-such-binary")
	if got, err := FindTerraform(""); err == nil {
		t.Errorf("FindTerraform with %s naming a missing binary found %s", TerraformEnv, got)
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
