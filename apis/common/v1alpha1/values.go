package v1alpha1

import (
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// ToValues converts a Go value into a JSON object map, the shape module inputs take.
func ToValues(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode values: %w", err)
	}
	out := map[string]any{}
	if string(raw) == "null" {
		return out, nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("decode values: %w", err)
	}
	return out, nil
}

// FromValues converts a JSON object map into a free-form JSON field value.
func FromValues(values map[string]any) (*apiextensionsv1.JSON, error) {
	if len(values) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(values)
	if err != nil {
		return nil, fmt.Errorf("encode values: %w", err)
	}
	return &apiextensionsv1.JSON{Raw: raw}, nil
}

// JSONValues converts a free-form JSON field value into a JSON object map.
func JSONValues(j *apiextensionsv1.JSON) (map[string]any, error) {
	out := map[string]any{}
	if j == nil || len(j.Raw) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(j.Raw, &out); err != nil {
		return nil, fmt.Errorf("decode values: %w", err)
	}
	return out, nil
}

// SetValues decodes a JSON object map into out, replacing its content.
func SetValues(values map[string]any, out any) error {
	raw, err := json.Marshal(values)
	if err != nil {
		return fmt.Errorf("encode values: %w", err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode values: %w", err)
	}
	return nil
}
