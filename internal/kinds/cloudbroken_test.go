package kinds

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"terraplane.io/terraplane/internal/devenv"
)

// TestStandinRejectsBrokenModules shows that the stand-ins' schemas can fail a module:
// a copy of a bundled module with a misspelt argument, and one with a block the
// provider removed (azurerm 3.0 removed addon_profile), fail terraform validate with
// terraform's own error, while the unchanged copies pass.
func TestStandinRejectsBrokenModules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs terraform")
	}
	mirror := t.TempDir()
	if err := devenv.TestMirror(mirror); err != nil {
		t.Fatal(err)
	}
	cli := filepath.Join(t.TempDir(), "cli.tfrc")
	if err := os.WriteFile(cli, []byte(`provider_installation { filesystem_mirror { path = "`+mirror+`" } }`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, module, from, to, want string
	}{
		{"misspelt argument", "gcp/redis", "memory_size_gb ", "memory_size_gbs ", `An argument named "memory_size_gbs" is not expected here.`},
		{"removed block", "azure/aks", `resource "azurerm_kubernetes_cluster" "this" {`, `resource "azurerm_kubernetes_cluster" "this" {` + "\n  addon_profile {}",
			`Blocks of type "addon_profile" are not expected here.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyModule(t, filepath.Join("..", "..", "tfmodules", tc.module))
			if out, err := terraform(t, cli, dir, "init", "-backend=false", "-input=false", "-no-color"); err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			if out, err := terraform(t, cli, dir, "validate", "-no-color"); err != nil {
				t.Fatalf("the unchanged %s does not validate: %v\n%s", tc.module, err, out)
			}
			main := filepath.Join(dir, "main.tf")
			src, _ := os.ReadFile(main)
			if !strings.Contains(string(src), tc.from) {
				t.Fatalf("%s/main.tf has no %q to change", tc.module, tc.from)
			}
			if err := os.WriteFile(main, []byte(strings.Replace(string(src), tc.from, tc.to, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := terraform(t, cli, dir, "validate", "-no-color")
			if err == nil || !strings.Contains(out, tc.want) {
				t.Errorf("validate of the broken %s: %v, want terraform's error %q:\n%s", tc.module, err, tc.want, out)
			}
		})
	}
}

// copyModule copies a module's files into a new directory.
func copyModule(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// terraform runs terraform (TERRAPLANE_TERRAFORM, else the one on PATH) in dir.
func terraform(t *testing.T, cli, dir string, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv("TERRAPLANE_TERRAFORM")
	if bin == "" {
		bin = "terraform"
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+cli, "CHECKPOINT_DISABLE=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}
