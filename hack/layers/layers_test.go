package layers

import (
	"os"
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

// module is the module path, which every package of the project starts with.
func module(t *testing.T) string {
	return goList(t, "-m")[0]
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
	for _, pkg := range []string{"internal/engine", "internal/render", "internal/holder", "internal/plandoc"} {
		t.Run(pkg, func(t *testing.T) {
			if got := slices.DeleteFunc(goList(t, "-deps", "./"+pkg), func(p string) bool { return !kubernetes(p) }); len(got) > 0 {
				t.Errorf("%s depends on Kubernetes packages: %s", pkg, strings.Join(got, ", "))
			}
		})
	}
}

// TestTestsImportNoController: the suites in test/ drive Terraplane from the outside, as
// a user does: through the API types, the composition root and the command, never a
// controller's package (a constant they need lives in apis/ or internal/).
func TestTestsImportNoController(t *testing.T) {
	controllers := module(t) + "/controllers/"
	lines := goList(t, "-f", `{{.ImportPath}}{{range .Imports}},{{.}}{{end}}{{range .TestImports}},{{.}}{{end}}{{range .XTestImports}},{{.}}{{end}}`, "./test/...")
	if len(lines) == 0 {
		t.Fatal("go list ./test/... listed no package")
	}
	for _, line := range lines {
		imports := strings.Split(line, ",")
		for _, p := range imports[1:] {
			if strings.HasPrefix(p, controllers) {
				t.Errorf("%s imports %s", imports[0], p)
			}
		}
	}
}

// TestArchitectureNamesEveryPackage: docs/architecture.md, the contributor's map, names
// every package under internal/ and controllers/ (in backquotes, as its layer table
// does), so a new package cannot go unmapped.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	prefix := module(t) + "/"
	pkgs := goList(t, "./internal/...", "./controllers/...")
	if len(pkgs) == 0 {
		t.Fatal("go list listed no package")
	}
	for _, p := range pkgs {
		if dir := strings.TrimPrefix(p, prefix); !strings.Contains(string(page), "`"+dir+"`") {
			t.Errorf("docs/architecture.md does not name `%s` and what it holds", dir)
		}
	}
}
