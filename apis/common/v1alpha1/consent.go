package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// AllowedNamespaces is a target's consent to references from other namespaces: a
// reference that names another namespace is followed only when the referrer's
// namespace is listed here or matches the selector. Without it, only references from
// the target's own namespace are followed.
type AllowedNamespaces struct {
	// Names lists namespaces whose objects may refer to this one; "*" allows every
	// namespace.
	// +optional
	// +listType=set
	Names []string `json:"names,omitempty"`
	// Selector allows the namespaces whose labels it matches; an empty selector ({})
	// matches every namespace.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}
