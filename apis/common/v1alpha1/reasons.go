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
	// ReasonTerraformNotAllowed: a stack ships terraform.terraplane.io kinds (code that
	// runs for claims) without a ClusterStackInstall's spec.allowTerraform.
	ReasonTerraformNotAllowed = "TerraformNotAllowed"
	// ReasonClientMissing: the kind's module runs a command-line client (psql, mysql)
	// that is not on the controller's PATH, as in the default image.
	ReasonClientMissing = "ClientMissing"
	// ReasonPullSecretInvalid: a pull secret for a registry is missing or unreadable.
	ReasonPullSecretInvalid = "PullSecretInvalid"
)

// Synced=False reasons with which change control holds a plan.
const (
	// ReasonAwaitingApproval: the plan waits for spec.approvedPlan to name it.
	ReasonAwaitingApproval = "AwaitingApproval"
	// ReasonDestructiveChangeRefused: the plan would delete or replace something that exists.
	ReasonDestructiveChangeRefused = "DestructiveChangeRefused"
	// ReasonAdoptionRefused: the first plan of a resource adopting existing
	// infrastructure would destroy (imports) or change (migrated state) something.
	ReasonAdoptionRefused = "AdoptionRefused"
	// ReasonCreateNotAllowed: the resource does not exist and managementPolicies do not
	// include Create.
	ReasonCreateNotAllowed = "CreateNotAllowed"
	// ReasonPolicyRequiresApproval: a plan policy's RequireApproval rule failed, so the
	// plan waits for spec.approvedPlan to name it.
	ReasonPolicyRequiresApproval = "PolicyRequiresApproval"
	// ReasonPolicyDenied: a plan policy's Deny rule failed (or could not be evaluated);
	// nothing is applied and no approval lets the plan through.
	ReasonPolicyDenied = "PolicyDenied"
)

// Reasons every reconciler shares.
const (
	// ReasonReconcileSuccess: the last reconcile did everything it had to.
	ReasonReconcileSuccess = "ReconcileSuccess"
	// ReasonReconcileError: an unexpected failure, retried with backoff.
	ReasonReconcileError = "ReconcileError"
	// ReasonWriteConflict: writes of a reconcile kept conflicting with what the API
	// server holds, several times in a row.
	ReasonWriteConflict = "WriteConflict"
	// ReasonApplying (condition Reconciling): the object's latest generation is being
	// applied.
	ReasonApplying = "Applying"
	// ReasonQueued (conditions Synced and Ready of a claim): the claim waits its turn for
	// a new resource; claims of its namespace made before it go first.
	ReasonQueued = "Queued"
	// ReasonClassNotReady (condition Synced of a claim): the class that makes the claim's
	// resource has not been checked yet, or its check failed.
	ReasonClassNotReady = "ClassNotReady"
	// ReasonTerraformRunning: Reconciling says what terraform is doing now, in a command
	// that has run for a while: the resource operation in flight and for how long.
	ReasonTerraformRunning = "TerraformRunning"
)

// Ready reasons of managed resources.
const (
	// ReasonAvailable: the external resource exists and every connection detail was written.
	ReasonAvailable = "Available"
	// ReasonCreating: the external resource has not been created successfully yet.
	ReasonCreating = "Creating"
	// ReasonDeleting: the external resource is being deleted.
	ReasonDeleting = "Deleting"
	// ReasonMissing: the external resource, or part of it, was deleted outside
	// Terraplane and is not recreated yet.
	ReasonMissing = "Missing"
)

// Reasons of Terraform managed resources.
const (
	// ReasonCreateInterrupted: a create was interrupted and the user must say how to go on.
	ReasonCreateInterrupted = "CreateInterrupted"
	// ReasonStateLocked: the state lock is held by a run the controller waits for, or by
	// one it cannot vouch for.
	ReasonStateLocked = "StateLocked"
	// ReasonDriftDetected: the external resource differs from the spec.
	ReasonDriftDetected = "DriftDetected"
	// ReasonNoDrift: the last plan found the external resource matches the spec.
	ReasonNoDrift = "NoDrift"
	// ReasonDriftCorrected: the last apply corrected drift a plan found.
	ReasonDriftCorrected = "DriftCorrected"
)

// Reasons of the kinds that reach target clusters.
const (
	// ReasonReachable: the target cluster answers with the ProviderConfig's credentials.
	ReasonReachable = "Reachable"
	// ReasonClusterUnreachable: the target cluster does not answer.
	ReasonClusterUnreachable = "ClusterUnreachable"
	// ReasonRemoteObjectConflict: the remote object exists and is not this object's to manage.
	ReasonRemoteObjectConflict = "RemoteObjectConflict"
	// ReasonAdopted (an event): an Object took over a remote object, as its adoptionPolicy allows.
	ReasonAdopted = "Adopted"
)
