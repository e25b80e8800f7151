package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StackInstallSpec asks for one stack package, named directly or by a CRD it owns.
// +kubebuilder:validation:XValidation:rule="(has(self.package) ? 1 : 0) + (has(self.crd) ? 1 : 0) == 1",message="set exactly one of package or crd"
type StackInstallSpec struct {
	// Source is the OCI registry host (e.g. registry.example.com:5000); empty uses the
	// manager's default registry (--stack-registry).
	// +optional
	Source string `json:"source,omitempty"`
	// Package is the package's repository and tag in the registry, e.g. stacks/sample:v1.
	// +optional
	Package string `json:"package,omitempty"`
	// CRD names a CRD as plural.group/version; the registry's stack index says which
	// package owns it.
	// +kubebuilder:validation:Pattern=`^[a-z0-9.-]+/[a-z0-9]+$`
	// +optional
	CRD string `json:"crd,omitempty"`
	// PullSecretName names a kubernetes.io/dockerconfigjson Secret with the registry's
	// credentials, in the install's namespace (a ClusterStackInstall's targetNamespace);
	// without it the manager's own docker keychain is used.
	// +optional
	PullSecretName string `json:"pullSecretName,omitempty"`
}

// StackInstallStatus is what the manager did with the request.
type StackInstallStatus struct {
	// Conditions: Resolved (package found), Unpacked (pulled and valid), DependenciesReady,
	// Installed (Stack record and CRDs applied), Ready and Synced; Reconciling and Stalled
	// as kstatus reads them.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation last applied, or found impossible to apply
	// until someone acts (then Stalled says why). While it is behind metadata.generation
	// the install is Reconciling.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ResolvedPackage is the full reference that was installed, with its digest.
	// +optional
	ResolvedPackage string `json:"resolvedPackage,omitempty"`
	// InstalledPackage is the package (with its digest) whose install last completed.
	// +optional
	InstalledPackage string `json:"installedPackage,omitempty"`
	// StackRef names the Stack record.
	// +optional
	StackRef *StackReference `json:"stackRef,omitempty"`
	// InstalledCRDs lists the CRDs this install owns, by name (plural.group).
	// +optional
	InstalledCRDs []string `json:"installedCRDs,omitempty"`
	// InstalledObjects lists the Terraform modules (ConfigMaps) and classes this install applied.
	// +optional
	InstalledObjects []ObjectReference `json:"installedObjects,omitempty"`
	// KeptCRDs lists owned CRDs that uninstall left in place because custom resources of them remain.
	// +optional
	KeptCRDs []string `json:"keptCRDs,omitempty"`
}

// ObjectReference names an object a stack installed.
type ObjectReference struct {
	// APIVersion of the object.
	APIVersion string `json:"apiVersion"`
	// Kind of the object.
	Kind string `json:"kind"`
	// Namespace of the object.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the object.
	Name string `json:"name"`
}

// StackReference names a Stack.
type StackReference struct {
	// Namespace of the Stack.
	Namespace string `json:"namespace"`
	// Name of the Stack.
	Name string `json:"name"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories=terraplane;stacks
// +kubebuilder:printcolumn:name="PACKAGE",type=string,JSONPath=".spec.package"
// +kubebuilder:printcolumn:name="CRD",type=string,JSONPath=".spec.crd"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="REASON",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].reason"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"

// StackInstall installs a stack whose permissions stay in its namespace (permissionScope Namespaced).
type StackInstall struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   StackInstallSpec   `json:"spec"`
	Status StackInstallStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// StackInstallList is a list of StackInstalls.
type StackInstallList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StackInstall `json:"items"`
}

// ClusterStackInstallSpec is a StackInstallSpec plus where the stack's controller runs.
type ClusterStackInstallSpec struct {
	StackInstallSpec `json:",inline"`
	// TargetNamespace holds the Stack record, its ServiceAccount and its controller.
	// +kubebuilder:default=terraplane-system
	// +optional
	TargetNamespace string `json:"targetNamespace,omitempty"`
	// AllowTerraform lets the stack install terraform.terraplane.io kinds: ModuleClasses,
	// whose modules run the stack author's code for every claim their classes serve, and
	// ProviderConfigs. Without it such a stack is refused (TerraformNotAllowed); a
	// StackInstall never installs them.
	// +optional
	AllowTerraform bool `json:"allowTerraform,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=terraplane;stacks
// +kubebuilder:printcolumn:name="PACKAGE",type=string,JSONPath=".spec.package"
// +kubebuilder:printcolumn:name="CRD",type=string,JSONPath=".spec.crd"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="REASON",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].reason"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"

// ClusterStackInstall installs a stack with cluster-wide permissions (permissionScope Cluster).
type ClusterStackInstall struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterStackInstallSpec `json:"spec"`
	Status StackInstallStatus      `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterStackInstallList is a list of ClusterStackInstalls.
type ClusterStackInstallList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterStackInstall `json:"items"`
}
