package stack

import (
	"github.com/google/go-containerregistry/pkg/name"

	"strings"

	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/stackpkg"
)

// checkGraph walks the stack index from root's unmet dependencies and reports, as a user
// error, the first CRD no package owns or the first cycle, naming the whole path.
func checkGraph(ix *stackpkg.Index, root string, deps []string, installed func(string) bool) error {
	seen := map[string]bool{}
	var walk func(path []string, deps []string, owns []string) error
	walk = func(path []string, deps []string, owns []string) error {
		for _, d := range deps {
			if installed(d) || ownsCRD(owns, d) {
				continue
			}
			e, err := ix.Lookup(d)
			if err != nil {
				return resource.UserErrorf(stacksv1.ReasonDependencyNotFound, "%s (needed by %s) is not installed and no package in the registry owns it; push one with `terraplane stack push`",
					d, strings.Join(path, " → "))
			}
			repo := repoOf(e.Package)
			for _, p := range path {
				if p == repo {
					return resource.UserErrorf(stacksv1.ReasonDependencyCycle, "dependency cycle: %s → %s", strings.Join(path, " → "), repo)
				}
			}
			if seen[repo] {
				continue
			}
			if err := walk(append(append([]string{}, path...), repo), e.DependsOn, e.Owns); err != nil {
				return err
			}
			seen[repo] = true
		}
		return nil
	}
	return walk([]string{root}, deps, nil)
}

// ownsCRD reports whether a CRD list (plural.group/version) satisfies dep.
func ownsCRD(owns []string, dep string) bool {
	for _, o := range owns {
		if stackpkg.Matches(dep, o) {
			return true
		}
	}
	return false
}

// repoOf is a package reference without its tag or digest: host/repo when it names a
// registry host, repo when it is registry-relative. A reference ggcr cannot parse is
// returned as it is (such a package can never be pulled either).
func repoOf(pkg string) string {
	const relative = "registry-relative.invalid"
	ref, err := name.ParseReference(pkg, name.WithDefaultRegistry(relative))
	if err != nil {
		return pkg
	}
	if ref.Context().RegistryStr() == relative {
		return ref.Context().RepositoryStr()
	}
	return ref.Context().Name()
}
