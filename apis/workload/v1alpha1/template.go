package v1alpha1

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TemplateMetadata is the part of a template's metadata the API server checks.
// +kubebuilder:pruning:PreserveUnknownFields
type TemplateMetadata struct {
	// Name of the remote object.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Namespace of the remote object; omit it for cluster-scoped kinds.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// Template is any Kubernetes object, of any kind, even one the control plane does not
// know. Every field is kept as written; apiVersion, kind and metadata.name are required.
// +kubebuilder:pruning:PreserveUnknownFields
type Template struct {
	// APIVersion of the remote object.
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`
	// Kind of the remote object.
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// Metadata of the remote object.
	Metadata TemplateMetadata `json:"metadata"`
	// raw is the whole object as JSON.
	raw []byte `json:"-"`
}

// MarshalJSON writes the whole object.
func (t Template) MarshalJSON() ([]byte, error) {
	if len(t.raw) > 0 {
		return t.raw, nil
	}
	type known Template
	return json.Marshal(known(t))
}

// UnmarshalJSON keeps the whole object and reads the fields the schema names.
func (t *Template) UnmarshalJSON(b []byte) error {
	type known Template
	var k known
	if err := json.Unmarshal(b, &k); err != nil {
		return fmt.Errorf("read template: %w", err)
	}
	*t = Template(k)
	t.raw = append([]byte(nil), b...)
	return nil
}

// DeepCopyInto copies t into out.
func (t *Template) DeepCopyInto(out *Template) {
	*out = *t
	out.raw = append([]byte(nil), t.raw...)
}

// Object returns the template as an unstructured object (without status).
func (t *Template) Object() (*unstructured.Unstructured, error) {
	b, err := t.MarshalJSON()
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("read template: %w", err)
	}
	unstructured.RemoveNestedField(u.Object, "status")
	return u, nil
}

// TemplateFrom builds a Template from an unstructured object.
func TemplateFrom(u *unstructured.Unstructured) (Template, error) {
	var t Template
	b, err := u.MarshalJSON()
	if err != nil {
		return t, err
	}
	return t, t.UnmarshalJSON(b)
}
