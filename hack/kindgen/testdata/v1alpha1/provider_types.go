package v1alpha1

import common "terraplane.io/terraplane/apis/common/v1alpha1"

// ProviderSpec says where widgets are made.
// +terraplane:provider:kind=Provider,doc="configures the widget factory for the widget kinds.\nIts credentials never reach a connection Secret."
// +terraplane:provider:printcolumn:name="REGION",type=string,JSONPath=`.spec.region`
// +terraplane:provider:printcolumn:name="PORT",type=integer,JSONPath=`.spec.port`
type ProviderSpec struct {
	// Region widgets are made in.
	Region string `json:"region"`
	// Port of the factory.
	Port int32 `json:"port,omitempty"`
}

// ProviderConfigSpec says how to reach a widget factory by hand.
// +terraplane:provider:kind=ProviderConfig,status=ProviderConfigStatus,doc="holds the credentials of one widget factory."
// +terraplane:provider:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
type ProviderConfigSpec struct {
	// Endpoint of the factory.
	Endpoint string `json:"endpoint"`
}

// ProviderConfigStatus reports the factory's version, and who uses it.
type ProviderConfigStatus struct {
	// Version the factory reports.
	// +optional
	Version string `json:"version,omitempty"`
	// ProviderStatus holds users and conditions.
	common.ProviderStatus `json:",inline"`
}
