package devenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApplyDir server-side applies every YAML document in dir's *.yaml files, in name order.
func ApplyDir(ctx context.Context, c client.Client, dir string, opts ...client.ApplyOption) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var applied []*unstructured.Unstructured
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		objs, err := ApplyYAML(ctx, c, raw, opts...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		applied = append(applied, objs...)
	}
	return applied, nil
}

// ApplyYAML server-side applies every document in raw.
func ApplyYAML(ctx context.Context, c client.Client, raw []byte, opts ...client.ApplyOption) ([]*unstructured.Unstructured, error) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var applied []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return applied, nil
			}
			return nil, fmt.Errorf("decode: %w", err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		opts := append([]client.ApplyOption{client.FieldOwner("terraplane-dev"), client.ForceOwnership}, opts...)
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), opts...); err != nil {
			return nil, fmt.Errorf("apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		applied = append(applied, obj)
	}
}
