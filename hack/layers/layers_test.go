package layers

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// goList runs go list with args in the module's root and returns its output lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(strings.TrimSpace(string(out)))
}

// kubernetes reports whether import path p is a Kubernetes package.
func kubernetes(p string) bool {
	return strings.HasPrefix(p, "k8s.io/") || strings.HasPrefix(p, "sigs.k8s.io/")
}

// TestKubernetesFree: the engine runs terraform and nothing else, so it imports no
// Kubernetes package, not even through another package (the runner process and tests
// build it without a cluster in sight); neither do the renderer and the lock holder's
// identity the engine marks its children with.
func TestKubernetesFree(t *testing.T) {
	for _, pkg := range []string{"internal/engine", "internal/render", "internal/holder"} {
		t.Run(pkg, func(t *testing.T) {
			if got := slices.DeleteFunc(goList(t, "-deps", "./"+pkg), func(p string) bool { return !kubernetes(p) }); len(got) > 0 {
				t.Errorf("%s depends on Kubernetes packages: %s", pkg, strings.Join(got, ", "))
			}
		})
	}
}
