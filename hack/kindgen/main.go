// Command kindgen writes the boilerplate of API kinds, the way crossplane's
// angryjet writes accessors: for every parameters struct marked
//
//	// +terraplane:managed:kind=RDSInstance,noun="an RDS database instance"
//	type RDSInstanceParameters struct { ... }
//
// it writes, into the package's zz_generated.managed.go, the class (RDSInstanceClass,
// its specTemplate and list), the managed kind (RDSInstance, its spec and list, status
// common.ResourceStatus), the accessors the registry uses, the GroupVersionKinds and the
// scheme registration; and, when the package declares no GroupVersion, the group's
// GroupVersion, SchemeBuilder and AddToScheme from its +groupName marker. A field marked
//
//	// +terraplane:immutable="a new name replaces the instance"
//
// becomes a CEL rule on spec.forProvider refusing a change once set. For every portable
// parameters struct marked
//
//	// +terraplane:claim:kind=RedisCluster,noun="a Redis cluster"
//
// it writes the claim kind (its spec inlines the parameters), the portable class, their
// lists and accessors; immediateOnly="why" refuses WaitForFirstConsumer classes. For every
// provider spec struct marked
//
//	// +terraplane:provider:kind=Provider,doc="configures access to AWS for managed resources in its namespace."
//	// +terraplane:provider:printcolumn:name="REGION",type=string,JSONPath=`.spec.region`
//	type ProviderSpec struct { ... }
//
// it writes the provider kind (doc comment "<kind> <doc>", a \n in doc starting a new
// line; its own printer columns, then USERS and AGE; status common.ProviderStatus, or the
// type status= names, which inlines it), its list, GetProviderStatus and its
// GroupVersionKind. controller-gen then writes the deepcopy functions and CRDs of the
// generated types. `make generate` runs:
//
//	go run ./hack/kindgen apis
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// output is the file kindgen writes in every package with generated kinds.
const output = "zz_generated.managed.go"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kindgen DIR (e.g. kindgen apis)")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "kindgen:", err)
		os.Exit(1)
	}
}

// run generates every package below root, and removes generated files of packages that
// no longer have generated kinds.
func run(root string) error {
	return filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		pkg, err := parsePackage(dir)
		if err != nil {
			return err
		}
		target := filepath.Join(dir, output)
		if pkg == nil || pkg.empty() {
			if err := os.Remove(target); err != nil && !os.IsNotExist(err) {
				return err
			}
			return nil
		}
		src, err := generate(pkg)
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		return os.WriteFile(target, src, 0o644)
	})
}
