package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClaimDefinitionNames name the claim kind, as a CRD's names do.
type ClaimDefinitionNames struct {
	// Kind of the claim, in CamelCase, e.g. Network.
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// Plural is the lower-case resource name, e.g. networks.
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9]*$`
	// +kubebuilder:validation:MaxLength=63
	Plural string `json:"plural"`
	// ShortNames for kubectl, e.g. [net].
	// +optional
	ShortNames []string `json:"shortNames,omitempty"`
	// Categories the claim kind joins besides terraplane and claim.
	// +optional
	Categories []string `json:"categories,omitempty"`
}

// ModuleClassReference names a ModuleClass.
type ModuleClassReference struct {
	// Name of the ModuleClass.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Namespace of the ModuleClass; terraplane-system when omitted.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// FromModule generates the claim's spec.parameters schema from a module's variables.
// +kubebuilder:validation:XValidation:rule="!(has(self.expose) && has(self.hide))",message="set at most one of expose and hide"
type FromModule struct {
	// ModuleClassRef names the ModuleClass whose module's variables become the claim's
	// parameters, name for name.
	ModuleClassRef ModuleClassReference `json:"moduleClassRef"`
	// Expose lists the only variables claims may set; the others stay class-only.
	// +optional
	Expose []string `json:"expose,omitempty"`
	// Hide lists variables claims may not set: the class (forProvider, variablesFrom)
	// supplies them.
	// +optional
	Hide []string `json:"hide,omitempty"`
	// ParameterSchemas replace the generated schema of single parameters, by variable
	// name: an OpenAPI v3 schema, as in a CRD (say, to type a variable of type any). The
	// API server must accept it as a structural schema.
	// +optional
	// +kubebuilder:validation:MaxProperties=256
	ParameterSchemas map[string]apiextensionsv1.JSON `json:"parameterSchemas,omitempty"`
	// InferAnyFromDefaults types a variable of type any (or without a type) from its
	// default when the default is a non-empty object or list of objects: its attributes
	// become known fields and others are refused. Off, such a parameter takes any value.
	// +optional
	InferAnyFromDefaults bool `json:"inferAnyFromDefaults,omitempty"`
}

// ClaimDefinitionSpec defines a claim kind and its portable class kind.
// +kubebuilder:validation:XValidation:rule="has(self.fromModule) != has(self.schema)",message="set exactly one of fromModule and schema"
// +kubebuilder:validation:XValidation:rule="self.group == oldSelf.group && self.names.kind == oldSelf.names.kind && self.names.plural == oldSelf.names.plural && has(self.classKind) == has(oldSelf.classKind) && (!has(self.classKind) || self.classKind == oldSelf.classKind)",message="group, names.kind, names.plural and classKind are immutable; create a new ClaimDefinition"
type ClaimDefinitionSpec struct {
	// Group of the claim and class kinds, e.g. platform.example.org. Their version is v1alpha1.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$`
	// +kubebuilder:validation:MaxLength=253
	Group string `json:"group"`
	// Names of the claim kind.
	Names ClaimDefinitionNames `json:"names"`
	// ClassKind is the portable class kind; <Kind>Class when omitted.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	ClassKind string `json:"classKind,omitempty"`
	// FromModule generates spec.parameters from a ModuleClass's module.
	// +optional
	FromModule *FromModule `json:"fromModule,omitempty"`
	// Schema is the OpenAPI v3 schema of spec.parameters, written out as in a CRD.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Schema *apiextensionsv1.JSON `json:"schema,omitempty"`
}

// UntranslatedValidation is a module validation rule that could not become a CEL rule:
// terraform still checks it, at plan time, not the API server at apply time.
type UntranslatedValidation struct {
	// Variable the rule belongs to.
	Variable string `json:"variable"`
	// Condition as written.
	Condition string `json:"condition"`
	// Reason it was not translated.
	Reason string `json:"reason"`
}

// ClaimDefinitionStatus reports the generated kinds.
type ClaimDefinitionStatus struct {
	// ClaimCRD is the name of the generated claim CustomResourceDefinition.
	// +optional
	ClaimCRD string `json:"claimCRD,omitempty"`
	// ClassCRD is the name of the generated portable class CustomResourceDefinition.
	// +optional
	ClassCRD string `json:"classCRD,omitempty"`
	// Untranslated lists module validation rules the claim schema does not check.
	// +optional
	Untranslated []UntranslatedValidation `json:"untranslated,omitempty"`
	// ObservedGeneration is the generation last served, or found impossible to serve
	// until someone acts (then Stalled says why). While it is behind metadata.generation
	// the definition is Reconciling.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready (the kinds are served, or why not: BreakingChange, ClaimsExist,
	// ...) and Synced.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClaimDefinition defines a claim kind and its portable class kind. It is cluster-scoped,
// like the CustomResourceDefinitions it generates (and like Crossplane's
// CompositeResourceDefinition): a kind exists for every namespace at once.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=terraplane,shortName=claimdef
// +kubebuilder:printcolumn:name="KIND",type=string,JSONPath=`.spec.names.kind`
// +kubebuilder:printcolumn:name="GROUP",type=string,JSONPath=`.spec.group`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="REASON",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClaimDefinition struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClaimDefinitionSpec   `json:"spec"`
	Status ClaimDefinitionStatus `json:"status,omitempty"`
}

// ClaimDefinitionList is a list of ClaimDefinitions.
// +kubebuilder:object:root=true
type ClaimDefinitionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClaimDefinition `json:"items"`
}

// ClassKindName is the portable class kind: spec.classKind, or <Kind>Class.
func (d *ClaimDefinition) ClassKindName() string {
	if d.Spec.ClassKind != "" {
		return d.Spec.ClassKind
	}
	return d.Spec.Names.Kind + "Class"
}
