package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// ObjectPatch copies one value from the claim, or from the cluster its first consumer
// was scheduled to, into the manifest of an Object made from the class. A source that has
// no value leaves the manifest as the class wrote it.
// +kubebuilder:validation:XValidation:rule="has(self.fromFieldPath) != has(self.fromClusterLabel)",message="set exactly one of fromFieldPath and fromClusterLabel"
// +kubebuilder:validation:XValidation:rule="!(self.toFieldPath in ['apiVersion', 'kind', 'metadata.name', 'metadata.namespace'])",message="toFieldPath cannot change the manifest's apiVersion, kind, name or namespace"
type ObjectPatch struct {
	// FromFieldPath is a dotted path in the claim, e.g. spec.storageGB.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$`
	FromFieldPath string `json:"fromFieldPath,omitempty"`
	// FromClusterLabel is a label of the cluster the claim's first consumer was scheduled
	// to (portable classes with bindingMode WaitForFirstConsumer), e.g. region.
	// +optional
	// +kubebuilder:validation:MinLength=1
	FromClusterLabel string `json:"fromClusterLabel,omitempty"`
	// ToFieldPath is a dotted path in the manifest, e.g. spec.storage.size.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$`
	ToFieldPath string `json:"toFieldPath"`
	// Format, when set, turns the value into a string with one %v verb, e.g. "%vGi".
	// +optional
	// +kubebuilder:validation:Pattern=`^[^%]*%v[^%]*$`
	Format string `json:"format,omitempty"`
}

// ObjectClassSpecTemplate is what Objects made from the class start with; providerRef
// names the kubernetes.terraplane.io ProviderConfig of the target cluster.
// +kubebuilder:validation:XValidation:rule="!has(self.approval) && !has(self.destructiveChanges) && !has(self.managementPolicies)",message="approval, destructiveChanges and managementPolicies apply to Terraform-backed kinds only: the Objects of an ObjectClass have no plans to approve, and their changes are applied at once"
// +kubebuilder:validation:XValidation:rule="!has(self.driftInterval) && !has(self.timeout)",message="driftInterval and timeout apply to Terraform-backed kinds only: the Objects of an ObjectClass run no terraform"
type ObjectClassSpecTemplate struct {
	common.ClassSpecTemplate `json:",inline"`
	// ForProvider is the manifest and connection details every Object starts with. The
	// manifest's metadata.name is a prefix: each Object's remote object is named
	// <name>-<first 8 hex digits of the claim's UID>.
	ForProvider ObjectParameters `json:"forProvider"`
	// Patches copy claim fields and cluster labels into the manifest.
	// +optional
	Patches []ObjectPatch `json:"patches,omitempty"`
}

// ObjectClass is a non-portable class whose claims are met by a Kubernetes object in a
// target cluster (the seed's Kubernetes-native providers), e.g. a PostgreSQLInstance
// met by a Rook CockroachDB Cluster.
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=terraplane;class
// +kubebuilder:validation:XValidation:rule="has(self.specTemplate.providerRef)",message="specTemplate.providerRef must name the kubernetes.terraplane.io ProviderConfig of the target cluster"
// +kubebuilder:printcolumn:name="PROVIDER",type=string,JSONPath=`.specTemplate.providerRef.name`
// +kubebuilder:printcolumn:name="KIND",type=string,JSONPath=`.specTemplate.forProvider.manifest.kind`
// +kubebuilder:printcolumn:name="RECLAIM-POLICY",type=string,JSONPath=`.specTemplate.reclaimPolicy`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ObjectClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// AllowedNamespaces lists the namespaces whose portable classes may point at this
	// class; portable classes in its own namespace always may.
	// +optional
	AllowedNamespaces *common.AllowedNamespaces `json:"allowedNamespaces,omitempty"`
	// SpecTemplate is what new Objects start with.
	SpecTemplate ObjectClassSpecTemplate `json:"specTemplate"`
}

// ObjectClassList is a list of ObjectClasses.
// +kubebuilder:object:root=true
type ObjectClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ObjectClass `json:"items"`
}

// GetSpecTemplate returns the shared part of the spec template.
func (c *ObjectClass) GetSpecTemplate() *common.ClassSpecTemplate {
	return &c.SpecTemplate.ClassSpecTemplate
}

// GetAllowedNamespaces returns the namespaces whose portable classes may point at this class.
func (c *ObjectClass) GetAllowedNamespaces() *common.AllowedNamespaces { return c.AllowedNamespaces }
