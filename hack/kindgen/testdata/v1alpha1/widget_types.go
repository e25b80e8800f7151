package v1alpha1

// WidgetParameters are the inputs of a widget module.
// +terraplane:managed:kind=Widget,noun="a widget"
type WidgetParameters struct {
	// Name of the widget.
	// +terraplane:immutable="a new name replaces the widget"
	Name string `json:"name,omitempty"`
	// Size of the widget.
	// +terraplane:immutable="a new size replaces the widget"
	Size *int32 `json:"size,omitempty"`
	// Tags of the widget.
	Tags map[string]string `json:"tags,omitempty"`
}

// GadgetParameters are the inputs of a gadget module.
// +terraplane:managed:kind=Gadget,class=GadgetPlan,noun="a gadget"
type GadgetParameters struct {
	// Enabled turns the gadget on.
	Enabled bool `json:"enabled,omitempty"`
}
