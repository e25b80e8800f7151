package v1alpha1

import common "terraplane.io/terraplane/apis/common/v1alpha1"

// Condition types of an install, one per phase, plus Ready and Synced.
const (
	// TypeResolved: the install's package reference resolved to a digest.
	TypeResolved = "Resolved"
	// TypeUnpacked: the package was pulled and its contents read and checked.
	TypeUnpacked = "Unpacked"
	// TypeDependenciesReady: every package the install depends on is installed.
	TypeDependenciesReady = "DependenciesReady"
	// TypeInstalled: the package's objects are applied.
	TypeInstalled = "Installed"
	// TypeControllerReady: the stack's controller, if it has one, is available.
	TypeControllerReady = "ControllerReady"
)

// Condition reasons of installs.
const (
	// ReasonSucceeded: the phase did what it had to.
	ReasonSucceeded = common.ReasonReconcileSuccess
	// ReasonPending: an earlier phase has not succeeded yet.
	ReasonPending = "Pending"
	// ReasonInstalled (event): a package was installed.
	ReasonInstalled = "Installed"
	// ReasonUpgraded (event): an installed package moved to another version.
	ReasonUpgraded = "Upgraded"
	// ReasonReconcileError: an unexpected failure, retried with backoff.
	ReasonReconcileError = common.ReasonReconcileError
	// ReasonNoRegistry: the package names no registry and no default is configured.
	ReasonNoRegistry = "NoRegistry"
	// ReasonRegistryUnavailable: the registry does not answer.
	ReasonRegistryUnavailable = "RegistryUnavailable"
	// ReasonCRDNotFound: no package in the registry owns the CRD an install asks for.
	ReasonCRDNotFound = "CRDNotFound"
	// ReasonPackageNotFound: the registry has no such package or tag.
	ReasonPackageNotFound = "PackageNotFound"
	// ReasonInvalidPackage: the package's contents cannot be read as a stack.
	ReasonInvalidPackage = "InvalidPackage"
	// ReasonUnsafePackage: the package ships objects an install may not create.
	ReasonUnsafePackage = "UnsafePackage"
	// ReasonScopeNotAllowed: the package holds objects beyond the install's scope (another
	// namespace, or a cluster-wide claim kind from a StackInstall).
	ReasonScopeNotAllowed = "PermissionScopeNotAllowed"
	// ReasonConflict: an object the install would write is owned by another install.
	ReasonConflict = "Conflict"
	// ReasonMissingNamespace: a namespace the install writes into does not exist.
	ReasonMissingNamespace = "MissingNamespace"
	// ReasonWaitingForDependencies: a dependency is not installed yet.
	ReasonWaitingForDependencies = "WaitingForDependencies"
	// ReasonWaitingForStack: the install's Stack, or its controller, is not set up yet.
	ReasonWaitingForStack = "WaitingForStack"
	// ReasonUninstalling: the install waits for its Stack, controller and RBAC to be removed.
	ReasonUninstalling = "Uninstalling"
	// ReasonKeptCRDs (event): uninstall kept CRDs that still have custom resources.
	ReasonKeptCRDs = "KeptCRDs"
	// ReasonKeptModules (event): uninstall kept Modules that are still in use.
	ReasonKeptModules = "KeptModules"
	// ReasonPullSecret: the install's pull secret is missing or unreadable.
	ReasonPullSecret = common.ReasonPullSecretInvalid
	// ReasonDependencyNotFound: a dependency is not installed and no package in the registry
	// owns it.
	ReasonDependencyNotFound = "DependencyNotFound"
	// ReasonDependencyCycle: the dependencies form a cycle.
	ReasonDependencyCycle = "DependencyCycle"
)

// Reasons of a Stack's Ready condition.
const (
	// ReasonControllerDeployed: the Stack's controller objects exist (Ready does not wait
	// for its pods).
	ReasonControllerDeployed = "ControllerDeployed"
	// ReasonNoController: the Stack runs no controller.
	ReasonNoController = "NoController"
	// ReasonInvalidStack: a Stack's spec cannot be turned into RBAC or a Deployment.
	ReasonInvalidStack = "InvalidStack"
)

// Annotations and labels the stack manager puts on what it installs.
const (
	// AnnotationOwner names the install (kind/namespace/name) that owns an object.
	AnnotationOwner = "stacks.terraplane.io/owner"
	// AnnotationKeptFrom marks a CRD that uninstall kept because custom resources remain;
	// a later install of a package that owns it adopts it.
	AnnotationKeptFrom = "stacks.terraplane.io/kept-from"
	// AnnotationDependencyOf marks an install the manager created for a dependency.
	AnnotationDependencyOf = "stacks.terraplane.io/dependency-of"
	// LabelStack carries the Stack's name on what the manager creates for it.
	LabelStack = "stacks.terraplane.io/stack"
)
