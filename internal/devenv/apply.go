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
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApplyDir server-side applies every YAML document in dir's *.yaml files, in name order.
func ApplyDir(ctx context.Context, c client.Client, dir string, opts ...client.ApplyOption) ([]*unstructured.Unstructured, error) {
	return ApplyDirWith(ctx, c, dir, nil, opts...)
}

// Edit changes an object read from a manifest before it is applied.
type Edit func(obj *unstructured.Unstructured) error

// ApplyDirWith is ApplyDir with edit (when not nil) run on every object first.
func ApplyDirWith(ctx context.Context, c client.Client, dir string, edit Edit, opts ...client.ApplyOption) ([]*unstructured.Unstructured, error) {
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
		objs, err := applyYAML(ctx, c, raw, edit, opts...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		applied = append(applied, objs...)
	}
	return applied, nil
}

// ApplyYAML server-side applies every document in raw.
func ApplyYAML(ctx context.Context, c client.Client, raw []byte, opts ...client.ApplyOption) ([]*unstructured.Unstructured, error) {
	return applyYAML(ctx, c, raw, nil, opts...)
}

func applyYAML(ctx context.Context, c client.Client, raw []byte, edit Edit, opts ...client.ApplyOption) ([]*unstructured.Unstructured, error) {
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
		if edit != nil {
			if err := edit(obj); err != nil {
				return nil, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
			}
		}
		opts := append([]client.ApplyOption{client.FieldOwner("terraplane-dev"), client.ForceOwnership}, opts...)
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), opts...); err != nil {
			return nil, fmt.Errorf("apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		applied = append(applied, obj)
	}
}

// QuickstartEndpoint is the S3 endpoint examples/quickstart's Provider names: the
// emulator that `terraplane dev --quickstart` starts on its default port.
const QuickstartEndpoint = "http://127.0.0.1:9900"

// PointAtS3 returns an Edit that points every aws.terraplane.io Provider whose S3
// endpoint is QuickstartEndpoint at endpoint instead (the S3 server actually started, on
// whatever --s3-port says); other objects pass unchanged.
func PointAtS3(endpoint string) Edit {
	return func(obj *unstructured.Unstructured) error {
		gvk := obj.GroupVersionKind()
		if gvk.Group != "aws.terraplane.io" || gvk.Kind != "Provider" {
			return nil
		}
		current, found, err := unstructured.NestedString(obj.Object, "spec", "endpoint")
		if err != nil || !found || strings.TrimSuffix(current, "/") != QuickstartEndpoint {
			return err
		}
		return unstructured.SetNestedField(obj.Object, endpoint, "spec", "endpoint")
	}
}
