package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// BindingPhase is where a claim or managed resource stands in the PersistentVolume-like lifecycle.
// +kubebuilder:validation:Enum=Unbound;Bound;Released
type BindingPhase string

// Binding phases.
const (
	// BindingPhaseUnbound means not (yet) bound to a claim or resource.
	BindingPhaseUnbound BindingPhase = "Unbound"
	// BindingPhaseBound means bound 1:1.
	BindingPhaseBound BindingPhase = "Bound"
	// BindingPhaseReleased means the claim is gone and the resource was retained.
	BindingPhaseReleased BindingPhase = "Released"
)

// ReclaimPolicy says what happens to a managed resource when its claim is deleted.
// +kubebuilder:validation:Enum=Delete;Retain
type ReclaimPolicy string

// Reclaim policies.
const (
	// ReclaimDelete destroys the external resource with its claim.
	ReclaimDelete ReclaimPolicy = "Delete"
	// ReclaimRetain keeps the external resource and its state.
	ReclaimRetain ReclaimPolicy = "Retain"
)

// Condition types shared by every Terraplane kind.
const (
	// TypeReady says whether the external resource exists and matches its spec.
	TypeReady = "Ready"
	// TypeSynced says whether the last reconcile succeeded.
	TypeSynced = "Synced"
	// TypeReconciling is present (True) on a claim or managed resource while its latest
	// edit is being applied; kstatus, and so Flux and Argo CD, read it as in progress.
	TypeReconciling = "Reconciling"
	// TypeDrifted says whether the last periodic plan found the external resource
	// differs from its spec and the difference is not yet corrected.
	TypeDrifted = "Drifted"
	// TypeStalled is present (True) on a claim or managed resource whose latest edit
	// cannot be applied without someone acting (bad input, a refused or unapproved
	// plan); kstatus reads it as failed.
	TypeStalled = "Stalled"
)

// DefaultClassLabel marks the namespace's default portable class of a claim kind.
const DefaultClassLabel = "terraplane.io/default"

// LocalReference names an object in the same namespace.
type LocalReference struct {
	// Name of the referenced object.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// SecretReference names a Secret, optionally in another namespace.
type SecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Namespace of the Secret; defaults to the referrer's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ClassReference points at a class of any kind, possibly in another namespace.
type ClassReference struct {
	// APIVersion of the class, e.g. storage.aws.terraplane.io/v1alpha1.
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`
	// Kind of the class, e.g. S3BucketClass.
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// Name of the class.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Namespace of the class; defaults to the referrer's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ObjectReference points at a claim or managed resource.
type ObjectReference struct {
	// APIVersion of the object.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// Kind of the object.
	// +optional
	Kind string `json:"kind,omitempty"`
	// Name of the object.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Namespace of the object.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// UID of the object, set when bound.
	// +optional
	UID types.UID `json:"uid,omitempty"`
}

// ClaimSpec holds the fields every claim shares.
type ClaimSpec struct {
	// ClassRef names a portable class in the claim's namespace. When omitted, the
	// namespace's default class (label terraplane.io/default: "true") is written here.
	// +optional
	ClassRef *LocalReference `json:"classRef,omitempty"`
	// ResourceRef names the managed resource bound to this claim. Set it yourself to
	// bind statically to an existing resource.
	// +optional
	ResourceRef *ObjectReference `json:"resourceRef,omitempty"`
	// WriteConnectionSecretToRef names the Secret in the claim's namespace that
	// receives the connection details.
	// +optional
	WriteConnectionSecretToRef *LocalReference `json:"writeConnectionSecretToRef,omitempty"`
	// PoolRef names a ResourcePool (scaling.terraplane.io) in the claim's namespace whose
	// claims are of this kind: an unbound claim takes one of its ready members at once,
	// and is provisioned from the pool's class when none is ready.
	// +optional
	PoolRef *PoolReference `json:"poolRef,omitempty"`
}

// PoolReference names a ResourcePool; a claim uses only a pool of its own namespace.
type PoolReference struct {
	// Name of the ResourcePool.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Namespace of the ResourcePool: empty or the claim's own (a pool is never shared
	// across namespaces; another is refused with ReferenceNotAllowed).
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ClaimStatus holds the status every claim shares.
type ClaimStatus struct {
	// BindingPhase of the claim.
	// +optional
	BindingPhase BindingPhase `json:"bindingPhase,omitempty"`
	// ObservedGeneration is the claim generation whose changes have been applied to its
	// resource, or found impossible to apply (then Stalled says why). While it is behind
	// metadata.generation the claim is Reconciling.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions Ready and Synced, and Reconciling and Stalled as kstatus reads them.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// BindingMode says when a claim of a portable class is provisioned and bound.
// +kubebuilder:validation:Enum=Immediate;WaitForFirstConsumer
type BindingMode string

// Binding modes.
const (
	// BindingImmediate provisions a claim as soon as it names the class.
	BindingImmediate BindingMode = "Immediate"
	// BindingWaitForFirstConsumer provisions a claim only once a KubernetesApplication
	// that uses its connection Secret is scheduled; the chosen cluster's labels reach the
	// class's configurator (e.g. to put a database in the cluster's region).
	BindingWaitForFirstConsumer BindingMode = "WaitForFirstConsumer"
)

// PortableClassReference is the classRef a portable class holds.
type PortableClassReference = ClassReference

// ClassSpecTemplate holds the fields every non-portable class's specTemplate shares.
type ClassSpecTemplate struct {
	// ProviderRef names the Provider (in the class's namespace) that new resources use.
	// Kinds whose module needs a provider require it.
	// +optional
	ProviderRef *LocalReference `json:"providerRef,omitempty"`
	// ReclaimPolicy of new resources.
	// +kubebuilder:default=Delete
	// +optional
	ReclaimPolicy ReclaimPolicy `json:"reclaimPolicy,omitempty"`
	// WriteConnectionSecretsToNamespace is where new resources write their connection
	// Secrets; defaults to the class's namespace.
	// +optional
	WriteConnectionSecretsToNamespace string `json:"writeConnectionSecretsToNamespace,omitempty"`
	// RunnerPool names the runner pool, in the class's namespace, that runs new resources'
	// terraform; empty means the namespace's default pool.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$`
	RunnerPool string `json:"runnerPool,omitempty"`
	// ChangePolicy of new resources: approval, destructiveChanges and managementPolicies.
	ChangePolicy `json:",inline"`
	// RevisionPolicy says whether the class's resources follow its new revisions:
	// Automatic (default) moves them to each new revision; Manual keeps each on its
	// spec.revision until it is changed. A resource's own spec.revisionPolicy wins.
	// +optional
	RevisionPolicy RevisionPolicy `json:"revisionPolicy,omitempty"`
	// Rollout stages how a new revision reaches the class's resources that follow new
	// revisions: a canary, then batches of maxUnavailable. Unset: a canary of 1, then
	// batches of 25%.
	// +optional
	Rollout *RolloutPolicy `json:"rollout,omitempty"`
	// Timing of new resources: driftInterval and timeout.
	Timing `json:",inline"`
}

// ManagedSpec holds the fields every managed resource's spec shares.
type ManagedSpec struct {
	// ProviderRef names the Provider in the resource's namespace. Kinds whose module
	// needs a provider require it.
	// +optional
	ProviderRef *LocalReference `json:"providerRef,omitempty"`
	// ReclaimPolicy says what happens to the external resource when the claim goes.
	// +kubebuilder:default=Delete
	// +optional
	ReclaimPolicy ReclaimPolicy `json:"reclaimPolicy,omitempty"`
	// WriteConnectionSecretToRef names the Secret that receives connection details;
	// empty writes none. Dynamic provisioning sets it when the claim asks for a Secret.
	// +optional
	WriteConnectionSecretToRef *SecretReference `json:"writeConnectionSecretToRef,omitempty"`
	// ClaimRef names the claim bound to this resource.
	// +optional
	ClaimRef *ObjectReference `json:"claimRef,omitempty"`
	// ClassRef names the class this resource was made from.
	// +optional
	ClassRef *ClassReference `json:"classRef,omitempty"`
	// AllowedNamespaces lists the namespaces whose claims may bind this resource
	// statically (spec.resourceRef). Claims in its own namespace always may, and so may
	// the claim spec.claimRef reserves it for.
	// +optional
	AllowedNamespaces *AllowedNamespaces `json:"allowedNamespaces,omitempty"`
	// RunnerPool names the runner pool, in the resource's namespace, that runs its
	// terraform (a process, or a Deployment in a cluster, with an identity of its own
	// that reaches only the state of the namespaces it serves); empty means the
	// namespace's default pool.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$`
	RunnerPool string `json:"runnerPool,omitempty"`
	// Imports adopt existing infrastructure: before the first apply each address is
	// imported from its provider ID, and the result is kept only if the plan then
	// destroys or replaces nothing.
	// +optional
	Imports []ImportInstruction `json:"imports,omitempty"`
	// ChangePolicy: approval, destructiveChanges and managementPolicies.
	ChangePolicy `json:",inline"`
	// RevisionPolicy says whether this resource follows its class's new revisions:
	// Automatic moves it to each one, Manual keeps it on spec.revision. Unset, the class's
	// specTemplate.revisionPolicy applies (Automatic if that is unset too).
	// +optional
	RevisionPolicy RevisionPolicy `json:"revisionPolicy,omitempty"`
	// Revision names the revision of its class (a ClassRevision in this namespace) whose
	// module, spec template and provider lock the resource runs. The claim controller sets
	// it for a resource made from a class; with revisionPolicy Manual, set it to one of
	// the class's status.revisions to move the resource. Empty: the class's live content.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Revision string `json:"revision,omitempty"`
	// Timing: driftInterval and timeout.
	Timing `json:",inline"`
	// ApprovedPlan is the id of a plan (status.terraform.plan.id) to apply: with
	// approval Manual, or for a plan that destructiveChanges: Refuse holds back. An id
	// that is not the pending plan's applies nothing.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ApprovedPlan string `json:"approvedPlan,omitempty"`
}

// Timing says how often a Terraform-backed resource is checked for drift and how long
// each terraform command may run for it. Native kinds (kubernetes.terraplane.io) ignore it.
type Timing struct {
	// DriftInterval is how often the resource, while its spec is unchanged, is planned to
	// detect drift, e.g. 1h; at least 1m. It defaults to the controller's
	// --drift-interval (10m).
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m')",message="driftInterval must be at least 1m"
	DriftInterval *metav1.Duration `json:"driftInterval,omitempty"`
	// Timeout bounds each terraform command run for the resource (init, plan, apply,
	// destroy), e.g. 45m for a database that takes long to create; between 1m and 24h.
	// A command past it is interrupted (SIGINT, then killed 30s later) and retried. It
	// defaults to the controller's command deadline (20m). The state lock a command
	// holds records its deadline, so that a lock left by a crash is released once no
	// command can still run.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m') && duration(self) <= duration('24h')",message="timeout must be between 1m and 24h"
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// DriftIntervalOr is the drift interval, def when unset.
func (t Timing) DriftIntervalOr(def time.Duration) time.Duration {
	if t.DriftInterval == nil || t.DriftInterval.Duration <= 0 {
		return def
	}
	return t.DriftInterval.Duration
}

// TimeoutOr is the command timeout, def when unset.
func (t Timing) TimeoutOr(def time.Duration) time.Duration {
	if t.Timeout == nil || t.Timeout.Duration <= 0 {
		return def
	}
	return t.Timeout.Duration
}

// ImportInstruction names an existing object to import into the resource's Terraform state.
type ImportInstruction struct {
	// Address of the resource inside the module, e.g. aws_s3_bucket.this,
	// module.net.aws_vpc.main[0] or random_string.s["a/b"]; it is parsed as a Terraform
	// resource address, and one that is not refuses the resource with a condition.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=1024
	Address string `json:"address"`
	// ID is the provider's identifier of the existing object (for example a bucket name).
	// +kubebuilder:validation:MinLength=1
	ID string `json:"id"`
}

// ManagedStatus holds the status every managed resource shares.
type ManagedStatus struct {
	// BindingPhase of the resource.
	// +optional
	BindingPhase BindingPhase `json:"bindingPhase,omitempty"`
	// Conditions Ready and Synced (Drifted for Terraform kinds), and Reconciling and
	// Stalled as kstatus reads them.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation last applied, or found impossible to apply
	// (then Stalled says why). While it is behind metadata.generation the resource is
	// Reconciling.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Revision is the class revision the resource last ran successfully: its state
	// matches that revision's module and template.
	// +optional
	Revision string `json:"revision,omitempty"`
	// Terraform records what the engine last did; it holds no secret values.
	// +optional
	Terraform TerraformStatus `json:"terraform,omitempty"`
}

// TerraformStatus records the engine's last observations.
type TerraformStatus struct {
	// InputsHash is the checksum of the workspace inputs last applied.
	// +optional
	InputsHash string `json:"inputsHash,omitempty"`
	// LastHandledRequest is the value of annotation terraplane.io/requested-at that the
	// last run answered: a new value asks for a plan (a drift check) at once.
	// +optional
	LastHandledRequest string `json:"lastHandledRequest,omitempty"`
	// LastPlanTime is when Terraform last compared the resource with its spec.
	// +optional
	LastPlanTime *metav1.Time `json:"lastPlanTime,omitempty"`
	// LastApplyTime is when Terraform last changed the resource.
	// +optional
	LastApplyTime *metav1.Time `json:"lastApplyTime,omitempty"`
	// Resources is the number of resource instances in the Terraform state.
	// +optional
	Resources int `json:"resources,omitempty"`
	// Plan is the latest plan that had changes: pending (awaiting approval or refused)
	// while lastApply names another id, applied once lastApply names it.
	// +optional
	Plan *PlanSummary `json:"plan,omitempty"`
	// LastApply is the last plan Terraform applied.
	// +optional
	LastApply *ApplySummary `json:"lastApply,omitempty"`
	// ProviderLock is the dependency lock (.terraform.lock.hcl) the resource last ran with:
	// the provider versions, and the checksums terraform recorded, that its state was
	// written with. Every later run installs exactly these; a newer version takes a plan
	// that waits for approval (reason ProviderUpgrade).
	// +optional
	ProviderLock string `json:"providerLock,omitempty"`
}
