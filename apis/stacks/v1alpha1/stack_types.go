package v1alpha1

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PermissionScope says whether a stack's controller acts cluster-wide or in its namespace.
// +kubebuilder:validation:Enum=Cluster;Namespaced
type PermissionScope string

// Permission scopes.
const (
	// PermissionScopeCluster grants a ClusterRole.
	PermissionScopeCluster PermissionScope = "Cluster"
	// PermissionScopeNamespaced grants a Role in the stack's namespace.
	PermissionScopeNamespaced PermissionScope = "Namespaced"
)

// Contributor is a maintainer or owner of a stack.
type Contributor struct {
	// Name of the person or team.
	Name string `json:"name"`
	// Email address.
	// +optional
	Email string `json:"email,omitempty"`
}

// Icon is an image for a stack, usually a data URI.
type Icon struct {
	// Base64Data is the image, base64 encoded.
	Base64Data string `json:"base64Data"`
	// MediaType is the image's MIME type, e.g. image/svg+xml.
	MediaType string `json:"mediaType"`
}

// CRDList names CRDs as plural.group/version; dependsOn entries may use a wildcard
// plural (*.group/version).
type CRDList []string

// AppMetadataSpec is the stack's app.yaml.
type AppMetadataSpec struct {
	// Title is the stack's name for people.
	// +optional
	Title string `json:"title,omitempty"`
	// OverviewShort is a one-line summary.
	// +optional
	OverviewShort string `json:"overviewShort,omitempty"`
	// Overview is a paragraph.
	// +optional
	Overview string `json:"overview,omitempty"`
	// Readme is markdown.
	// +optional
	Readme string `json:"readme,omitempty"`
	// Version of the stack.
	// +optional
	Version string `json:"version,omitempty"`
	// Icons of the stack.
	// +optional
	Icons []Icon `json:"icons,omitempty"`
	// Maintainers of the stack.
	// +optional
	Maintainers []Contributor `json:"maintainers,omitempty"`
	// Owners of the stack.
	// +optional
	Owners []Contributor `json:"owners,omitempty"`
	// Company behind the stack.
	// +optional
	Company string `json:"company,omitempty"`
	// Category, e.g. Database.
	// +optional
	Category string `json:"category,omitempty"`
	// Keywords for search.
	// +optional
	Keywords []string `json:"keywords,omitempty"`
	// Website of the stack.
	// +optional
	Website string `json:"website,omitempty"`
	// Source code location.
	// +optional
	Source string `json:"source,omitempty"`
	// License, e.g. Apache-2.0.
	// +optional
	License string `json:"license,omitempty"`
	// DependsOn lists the CRDs the stack uses but does not own.
	// +optional
	DependsOn []CRDDependency `json:"dependsOn,omitempty"`
	// PermissionScope of the stack's controller.
	// +kubebuilder:default=Namespaced
	// +optional
	PermissionScope PermissionScope `json:"permissionScope,omitempty"`
}

// CRDDependency is one entry of dependsOn.
type CRDDependency struct {
	// CRD is plural.group/version, or *.group/version for every kind of a group.
	// +kubebuilder:validation:Pattern=`^(\*|[a-z0-9-]+)\.[a-z0-9.-]+/[a-z0-9]+$`
	CRD string `json:"crd"`
}

// CRDs are the custom resource definitions a stack owns or uses.
type CRDs struct {
	// Owned CRDs, installed with the stack.
	// +optional
	Owned CRDList `json:"owned,omitempty"`
	// DependsOn CRDs, installed by other stacks.
	// +optional
	DependsOn CRDList `json:"dependsOn,omitempty"`
}

// ControllerSpec is how the stack's controller runs.
type ControllerSpec struct {
	// Deployment runs the controller; the manager sets its ServiceAccount and the
	// POD_NAME / POD_NAMESPACE environment.
	// +optional
	Deployment *ControllerDeployment `json:"deployment,omitempty"`
}

// ControllerDeployment is a named Deployment spec.
type ControllerDeployment struct {
	// Name of the Deployment.
	Name string `json:"name"`
	// Spec of the Deployment.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Spec appsv1.DeploymentSpec `json:"spec"`
}

// StackSpec is the record of an installed stack.
type StackSpec struct {
	AppMetadataSpec `json:",inline"`
	// CRDs the stack owns and depends on.
	// +optional
	CRDs CRDs `json:"customresourcedefinitions,omitempty"`
	// Controller of the stack; stacks made only of Terraform modules and classes have none.
	// +optional
	Controller ControllerSpec `json:"controller,omitempty"`
}

// StackStatus is what the manager made of the Stack.
type StackStatus struct {
	// Conditions Ready and Synced, and Reconciling and Stalled as kstatus reads them.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation last applied, or found impossible to apply
	// until someone acts (then Stalled says why). While it is behind metadata.generation
	// the Stack is Reconciling.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ServiceAccount the controller runs as.
	// +optional
	ServiceAccount string `json:"serviceAccount,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,categories=terraplane;stacks
// +kubebuilder:printcolumn:name="TITLE",type=string,JSONPath=".spec.title"
// +kubebuilder:printcolumn:name="VERSION",type=string,JSONPath=".spec.version"
// +kubebuilder:printcolumn:name="SCOPE",type=string,JSONPath=".spec.permissionScope"
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"

// Stack is an installed stack: its metadata, CRDs, permissions and controller.
type Stack struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   StackSpec   `json:"spec"`
	Status StackStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// StackList is a list of Stacks.
type StackList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Stack `json:"items"`
}
