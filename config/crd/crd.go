// Package crd embeds the CustomResourceDefinitions that controller-gen generates into
// bases/, so that `terraplane dev` and the tests install exactly what `make generate` wrote.
package crd

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
)

//go:embed bases/*.yaml
var bases embed.FS

// CRDs returns every Terraplane CustomResourceDefinition.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, f := range files {
		raw, err := bases.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096).Decode(crd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", f, err)
		}
		out = append(out, crd)
	}
	return out, nil
}
