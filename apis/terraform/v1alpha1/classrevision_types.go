package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// ClassRevisionSpec is what the resources of a class run at one revision.
type ClassRevisionSpec struct {
	// ClassRef names the class, in the revision's namespace.
	ClassRef common.ClassReference `json:"classRef"`
	// Revision is the revision's number: 1 for the class's first.
	// +kubebuilder:validation:Minimum=1
	Revision int64 `json:"revision"`
	// Hash is the content hash the revision is named by: of the class's kind and name,
	// its spec template, the module's files, the module's provider lock and the specs of
	// the ProviderConfigs the template names.
	Hash string `json:"hash"`
	// Template is the class's specTemplate (without revisionPolicy) at this revision.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Template *apiextensionsv1.JSON `json:"template"`
	// Module is the module's files at this revision, as a gzipped tar.
	Module []byte `json:"module"`
	// ProviderLock is the module's own dependency lock (committed beside a bundled
	// module, or shipped with it); empty when it has none.
	// +optional
	ProviderLock string `json:"providerLock,omitempty"`
	// ProviderConfigs are the specs of the ProviderConfigs the template names, as they
	// were when the revision was made: resources at this revision run with them. Their
	// credentials are Secret references; the Secrets' data is read at each run.
	// +optional
	// +listType=map
	// +listMapKey=name
	ProviderConfigs []RevisionProviderConfig `json:"providerConfigs,omitempty"`
}

// RevisionProviderConfig is one ProviderConfig's spec as a revision keeps it.
type RevisionProviderConfig struct {
	// Name is the ProviderConfig's name, in the revision's namespace.
	Name string `json:"name"`
	// Spec is the ProviderConfig's spec.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Spec *apiextensionsv1.JSON `json:"spec"`
}

// ClassRevision is an immutable snapshot of what a class's resources run: its module, its
// spec template, its module's provider lock and its ProviderConfigs. The revision controller makes one each
// time one of them changes; resources name the revision they run in spec.revision and
// status.revision.
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=terraplane,shortName=classrev
// +kubebuilder:printcolumn:name="CLASS-KIND",type=string,JSONPath=`.spec.classRef.kind`
// +kubebuilder:printcolumn:name="CLASS",type=string,JSONPath=`.spec.classRef.name`
// +kubebuilder:printcolumn:name="REVISION",type=integer,JSONPath=`.spec.revision`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClassRevision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the revision's content; it never changes.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a ClassRevision is immutable; the class makes a new one"
	Spec ClassRevisionSpec `json:"spec"`
}

// ClassRevisionList is a list of ClassRevisions.
// +kubebuilder:object:root=true
type ClassRevisionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClassRevision `json:"items"`
}
