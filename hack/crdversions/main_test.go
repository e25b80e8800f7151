package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestWithBeta: v1beta1 is added as a copy of v1alpha1 (schema, subresources, columns)
// and becomes the storage version; a CRD that has v1beta1 already is left as it is.
func TestWithBeta(t *testing.T) {
	crd := []byte(`---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: buckets.storage.terraplane.io
spec:
  group: storage.terraplane.io
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
    subresources:
      status: {}
`)
	out, err := withBeta(crd)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Spec struct {
			Versions []map[string]any `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	version := func(name string, storage bool) map[string]any {
		return map[string]any{"name": name, "served": true, "storage": storage,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}, "subresources": map[string]any{"status": map[string]any{}}}
	}
	if d := cmp.Diff([]map[string]any{version("v1alpha1", false), version("v1beta1", true)}, got.Spec.Versions); d != "" {
		t.Errorf("versions (-want +got):\n%s", d)
	}
	again, err := withBeta(out)
	if err != nil || string(again) != string(out) {
		t.Errorf("a second run changed the CRD: %v\n%s", err, again)
	}
	if _, err := withBeta([]byte("spec: {versions: [{name: v2}]}")); err == nil {
		t.Error("a CRD without v1alpha1 is accepted")
	}
}
