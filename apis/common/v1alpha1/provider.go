package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// TypeInUse says whether objects use a Provider or ProviderConfig; its message names them.
// A provider in use is not deleted until they are gone.
const TypeInUse = "InUse"

// InUseFinalizer holds a Provider or ProviderConfig while objects use it.
const InUseFinalizer = "terraplane.io/in-use"

// ProviderStatus is the status every Provider and ProviderConfig shares: who uses it.
type ProviderStatus struct {
	// Users counts the objects that name this provider: managed resources, and for a
	// kubernetes.terraplane.io ProviderConfig the application resources placed on its
	// cluster. While it is above zero, deleting the provider waits.
	// +optional
	Users int `json:"users,omitempty"`
	// Conditions: InUse names the users (and says when deletion waits for them).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
