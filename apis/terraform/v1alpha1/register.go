package v1alpha1

func init() {
	SchemeBuilder.Register(&ModuleClass{}, &ModuleClassList{}, &Module{}, &ModuleList{}, &ClassRevision{}, &ClassRevisionList{}, &Plan{}, &PlanList{})
}

// ProviderConfigResource is the ProviderConfig kind's qualified resource name, which
// kubectl resolves to this group only: messages name ProviderConfigs with it.
const ProviderConfigResource = "providerconfigs.terraform.terraplane.io"
