package v1alpha1

func init() {
	SchemeBuilder.Register(&Object{}, &ObjectList{}, &ObjectClass{}, &ObjectClassList{}, &Cluster{}, &ClusterList{})
}

// ProviderConfigResource is the ProviderConfig kind's qualified resource name, which
// kubectl resolves to this group only: messages name ProviderConfigs with it.
const ProviderConfigResource = "providerconfigs.kubernetes.terraplane.io"
