package v1alpha1

// Condition reasons of tenancy and state integrity, shared by every kind that follows a
// reference or keeps Terraform state.
const (
	// ReasonReferenceNotAllowed: a reference names an object in another namespace whose
	// allowedNamespaces does not include the referrer's namespace.
	ReasonReferenceNotAllowed = "ReferenceNotAllowed"
	// ReasonUnsafeKubeconfig: a kubeconfig read from a Secret asks to run a command,
	// use an auth plugin or read local files, which the controller refuses.
	ReasonUnsafeKubeconfig = "UnsafeKubeconfig"
	// ReasonConnectionSecretConflict: the Secret a connection Secret would be written to
	// exists and is not controlled by the object writing it.
	ReasonConnectionSecretConflict = "ConnectionSecretConflict"
	// ReasonStateMissing: the resource records managed objects but its Terraform state
	// is empty; nothing is applied until a user says how to go on.
	ReasonStateMissing = "StateMissing"
	// ReasonPlanTooLarge: a saved plan is too large to keep for approval.
	ReasonPlanTooLarge = "PlanTooLarge"
	// ReasonProviderUpgrade: a plan would use a provider version outside the module's
	// lock, and waits for approval.
	ReasonProviderUpgrade = "ProviderUpgrade"
)
