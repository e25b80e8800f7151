package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
)

// RemoteSecretKeySelector reads one key of a Secret that the remote object names.
type RemoteSecretKeySelector struct {
	// NameFieldPath is the dotted path in the remote object that holds the Secret's
	// name, e.g. status.credentialsSecret. The Secret is in the remote object's namespace.
	// +kubebuilder:validation:MinLength=1
	NameFieldPath string `json:"nameFieldPath"`
	// Key in that Secret.
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
}

// ConnectionDetail is one key of the connection Secret, read from the remote object.
// +kubebuilder:validation:XValidation:rule="has(self.fieldPath) != has(self.fromSecret)",message="set exactly one of fieldPath and fromSecret"
type ConnectionDetail struct {
	// Key in the connection Secret, e.g. endpoint.
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
	// FieldPath is a dotted path in the remote object, e.g. status.endpoint.
	// +optional
	FieldPath string `json:"fieldPath,omitempty"`
	// FromSecret reads the value from a Secret the remote object names.
	// +optional
	FromSecret *RemoteSecretKeySelector `json:"fromSecret,omitempty"`
}

// ObjectParameters are an Object's remote object and where its connection details are.
type ObjectParameters struct {
	// Manifest is the object to create in the target cluster, of any kind.
	Manifest workloadv1.Template `json:"manifest"`
	// ConnectionDetails are read from the remote object into the connection Secret.
	// The Object is Ready once every one of them has a value.
	// +optional
	// +listType=map
	// +listMapKey=key
	ConnectionDetails []ConnectionDetail `json:"connectionDetails,omitempty"`
}

// ObjectSpec is a Kubernetes object in a target cluster managed as an external resource.
type ObjectSpec struct {
	// ProviderConfigRef names the ProviderConfig (in the Object's namespace) of the target cluster.
	ProviderConfigRef common.LocalReference `json:"providerConfigRef"`
	// ReclaimPolicy: Delete removes the remote object with the Object, Retain keeps it.
	// +kubebuilder:default=Delete
	// +optional
	ReclaimPolicy common.ReclaimPolicy `json:"reclaimPolicy,omitempty"`
	// WriteConnectionSecretToRef names the Secret that receives the connection details;
	// it defaults to <name>-connection in the Object's namespace.
	// +optional
	WriteConnectionSecretToRef *common.SecretReference `json:"writeConnectionSecretToRef,omitempty"`
	// ForProvider holds the manifest and the connection details.
	ForProvider ObjectParameters `json:"forProvider"`
}

// ObjectStatus is what the target cluster reports.
type ObjectStatus struct {
	// AtProvider is the remote object's .status, copied verbatim.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	AtProvider *apiextensionsv1.JSON `json:"atProvider,omitempty"`
	// Conditions Ready and Synced.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Object is a managed resource whose external resource is a Kubernetes object in a
// target cluster (e.g. a Rook CockroachDB Cluster); an admin creates it directly.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=terraplane;managed
// +kubebuilder:validation:XValidation:rule="self.spec.forProvider.manifest.apiVersion == oldSelf.spec.forProvider.manifest.apiVersion && self.spec.forProvider.manifest.kind == oldSelf.spec.forProvider.manifest.kind && self.spec.forProvider.manifest.metadata.name == oldSelf.spec.forProvider.manifest.metadata.name",message="manifest apiVersion, kind and name are immutable"
// +kubebuilder:printcolumn:name="KIND",type=string,JSONPath=`.spec.forProvider.manifest.kind`
// +kubebuilder:printcolumn:name="NAME",type=string,JSONPath=`.spec.forProvider.manifest.metadata.name`
// +kubebuilder:printcolumn:name="PROVIDER",type=string,JSONPath=`.spec.providerConfigRef.name`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Object struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ObjectSpec   `json:"spec"`
	Status ObjectStatus `json:"status,omitempty"`
}

// ObjectList is a list of Objects.
// +kubebuilder:object:root=true
type ObjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Object `json:"items"`
}
