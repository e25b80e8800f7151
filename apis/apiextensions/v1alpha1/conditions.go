package v1alpha1

// TypeEstablished is True once both CRDs of the definition are served by the API server:
// the controller then serves its kind.
const TypeEstablished = "Established"

// Reasons of the Ready condition.
const (
	// ReasonServed: both kinds are Established and claims of the kind are served.
	ReasonServed = "Served"
	// ReasonBreakingChange: the new schema would break existing claims; the old one serves.
	ReasonBreakingChange = "BreakingChange"
	// ReasonClaimsExist: the definition is deleted, and waits for its claims to go.
	ReasonClaimsExist = "ClaimsExist"
	// ReasonInvalidSchema: no schema could be made, or the API server refused it.
	ReasonInvalidSchema = "InvalidSchema"
	// ReasonModuleClassNotFound: fromModule names a ModuleClass that does not exist.
	ReasonModuleClassNotFound = "ModuleClassNotFound"
	// ReasonConflict: the kind or its CRD belongs to something else.
	ReasonConflict = "Conflict"
	// ReasonWaitingForCRD: a CRD is not Established yet.
	ReasonWaitingForCRD = "WaitingForCRD"
	// ReasonNameConflict: the event that says a name of the kinds is served by another
	// group too (the kinds are served all the same).
	ReasonNameConflict = "NameConflict"
)
