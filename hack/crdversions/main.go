// Command crdversions serves the kinds users write most at v1beta1 beside v1alpha1: it
// adds to each named CRD a v1beta1 version with the same schema, subresources and
// columns, stored as v1beta1. The schemas are the same, so the API server converts
// between the versions losslessly by their apiVersion alone (conversion strategy None).
//
//	go run ./hack/crdversions config/crd/bases buckets.storage.terraplane.io ...
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

const (
	// from is the version every kind is written at.
	from = "v1alpha1"
	// to is the version served beside it, and stored.
	to = "v1beta1"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: crdversions DIR CRD-NAME...")
		os.Exit(2)
	}
	for _, name := range os.Args[2:] {
		if err := addVersion(os.Args[1], name); err != nil {
			fmt.Fprintln(os.Stderr, "crdversions:", err)
			os.Exit(1)
		}
	}
}

// addVersion adds the v1beta1 version to the CRD name, whose file is in dir as
// controller-gen names it (group_plural.yaml).
func addVersion(dir, name string) error {
	plural, group, ok := strings.Cut(name, ".")
	if !ok {
		return fmt.Errorf("%s is not a CRD name (plural.group)", name)
	}
	path := filepath.Join(dir, group+"_"+plural+".yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := withBeta(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}

// withBeta is the CRD raw with the v1beta1 version added, a copy of v1alpha1, and
// v1beta1 the storage version. A CRD that has it already is returned as it is.
func withBeta(raw []byte) ([]byte, error) {
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		return nil, err
	}
	spec, _ := crd["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	var alpha map[string]any
	for _, v := range versions {
		m, _ := v.(map[string]any)
		switch m["name"] {
		case to:
			return raw, nil
		case from:
			alpha = m
		}
	}
	if alpha == nil {
		return nil, fmt.Errorf("no %s version", from)
	}
	beta := map[string]any{}
	for k, v := range alpha {
		beta[k] = v
	}
	beta["name"], beta["storage"], alpha["storage"] = to, true, false
	spec["versions"] = append(versions, beta)
	out, err := yaml.Marshal(crd)
	if err != nil {
		return nil, err
	}
	return append([]byte("---\n"), bytes.TrimPrefix(out, []byte("---\n"))...), nil
}
