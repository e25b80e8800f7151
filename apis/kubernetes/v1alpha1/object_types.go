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
	// +kubebuilder:validation:MinLength=1
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

// AdoptionPolicy says whether an Object takes over a remote object it did not create.
// +kubebuilder:validation:Enum=Never;Orphaned;Always
type AdoptionPolicy string

// Adoption policies.
const (
	// AdoptNever leaves every remote object the Object did not create alone, and reports
	// the conflict.
	AdoptNever AdoptionPolicy = "Never"
	// AdoptOrphaned takes over a remote object left behind by a Terraplane object that no
	// longer exists, such as an Object deleted with reclaimPolicy Retain.
	AdoptOrphaned AdoptionPolicy = "Orphaned"
	// AdoptAlways also takes over a remote object that Terraplane never managed.
	AdoptAlways AdoptionPolicy = "Always"
)

// ObjectSpec is a Kubernetes object in a target cluster managed as an external resource.
// spec.providerRef names the kubernetes.terraplane.io ProviderConfig (in the Object's
// namespace) of the target cluster; the connection Secret is written only when
// spec.writeConnectionSecretToRef is set (dynamic provisioning sets it when the claim asks).
// +kubebuilder:validation:XValidation:rule="!has(self.approval) && !has(self.destructiveChanges) && !has(self.managementPolicies) && !has(self.approvedPlan)",message="approval, destructiveChanges, managementPolicies and approvedPlan apply to Terraform-backed kinds only: an Object has no plans to approve, and its changes are applied at once"
// +kubebuilder:validation:XValidation:rule="!has(self.driftInterval) && !has(self.timeout)",message="driftInterval and timeout apply to Terraform-backed kinds only: an Object runs no terraform"
type ObjectSpec struct {
	common.ManagedSpec `json:",inline"`
	// ForProvider holds the manifest and the connection details.
	ForProvider ObjectParameters `json:"forProvider"`
	// AdoptionPolicy says whether this Object takes over a remote object of the
	// manifest's kind and name that it did not create: Never (default) leaves it alone and
	// reports the conflict; Orphaned takes over one left behind by a Terraplane object
	// that no longer exists (an Object deleted with reclaimPolicy Retain, say); Always
	// also takes over one that Terraplane never managed. A remote object whose Terraplane
	// owner still exists is never taken over.
	// +kubebuilder:default=Never
	// +optional
	AdoptionPolicy AdoptionPolicy `json:"adoptionPolicy,omitempty"`
}

// ObjectStatus is what the target cluster reports.
type ObjectStatus struct {
	common.ManagedStatus `json:",inline"`
	// AtProvider is the remote object's .status, copied verbatim.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	AtProvider *apiextensionsv1.JSON `json:"atProvider,omitempty"`
}

// Object is a managed resource whose external resource is a Kubernetes object in a
// target cluster (e.g. a Rook CockroachDB Cluster): an admin creates it directly (static
// provisioning), or a claim's class (ObjectClass) makes it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=terraplane;managed
// +kubebuilder:validation:XValidation:rule="self.spec.forProvider.manifest.apiVersion == oldSelf.spec.forProvider.manifest.apiVersion && self.spec.forProvider.manifest.kind == oldSelf.spec.forProvider.manifest.kind && self.spec.forProvider.manifest.metadata.name == oldSelf.spec.forProvider.manifest.metadata.name",message="manifest apiVersion, kind and name are immutable"
// +kubebuilder:validation:XValidation:rule="has(self.spec.providerRef)",message="spec.providerRef must name the kubernetes.terraplane.io ProviderConfig of the target cluster"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.imports)",message="spec.imports is for Terraform-backed kinds; an Object adopts nothing"
// +kubebuilder:printcolumn:name="STATUS",type=string,JSONPath=`.status.bindingPhase`
// +kubebuilder:printcolumn:name="CLAIM",type=string,JSONPath=`.spec.claimRef.name`
// +kubebuilder:printcolumn:name="CLASS",type=string,JSONPath=`.spec.classRef.name`
// +kubebuilder:printcolumn:name="KIND",type=string,JSONPath=`.spec.forProvider.manifest.kind`
// +kubebuilder:printcolumn:name="NAME",type=string,JSONPath=`.spec.forProvider.manifest.metadata.name`
// +kubebuilder:printcolumn:name="PROVIDER",type=string,JSONPath=`.spec.providerRef.name`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=="Synced")].status`
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

// GetManagedSpec returns the shared managed spec.
func (o *Object) GetManagedSpec() *common.ManagedSpec { return &o.Spec.ManagedSpec }

// GetManagedStatus returns the shared managed status.
func (o *Object) GetManagedStatus() *common.ManagedStatus { return &o.Status.ManagedStatus }

// GetForProvider returns spec.forProvider as a JSON-shaped value.
func (o *Object) GetForProvider() (map[string]any, error) { return common.ToValues(o.Spec.ForProvider) }

// SetForProvider replaces spec.forProvider with a JSON-shaped value.
func (o *Object) SetForProvider(values map[string]any) error {
	return common.SetValues(values, &o.Spec.ForProvider)
}

// SetAtProvider records the remote object's status in status.atProvider.
func (o *Object) SetAtProvider(status map[string]any) error {
	v, err := common.FromValues(status)
	o.Status.AtProvider = v
	return err
}
