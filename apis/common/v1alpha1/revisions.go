package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RevisionPolicy says whether a resource follows its class's new revisions.
// +kubebuilder:validation:Enum=Automatic;Manual
type RevisionPolicy string

// Revision policies.
const (
	// RevisionAutomatic moves the resource to each new revision of its class.
	RevisionAutomatic RevisionPolicy = "Automatic"
	// RevisionManual keeps the resource on its spec.revision until someone changes it.
	RevisionManual RevisionPolicy = "Manual"
)

// RevisionPolicyOf is the policy a resource follows: its own, else its class's, else
// Automatic.
func RevisionPolicyOf(resource, class RevisionPolicy) RevisionPolicy {
	switch {
	case resource != "":
		return resource
	case class != "":
		return class
	}
	return RevisionAutomatic
}

// ClassRevisions is what a class reports about its revisions.
type ClassRevisions struct {
	// LatestRevision names the class's newest revision: a ClassRevision in the class's
	// namespace (kubectl get classrevisions).
	// +optional
	LatestRevision string `json:"latestRevision,omitempty"`
	// Revisions lists the revisions kept, newest first, with how many of the class's
	// resources run each.
	// +optional
	// +listType=map
	// +listMapKey=name
	Revisions []RevisionCount `json:"revisions,omitempty"`
	// Rollout says how far the rollout of a revision to the resources that follow new
	// revisions (revisionPolicy Automatic) has come.
	// +optional
	Rollout *RolloutStatus `json:"rollout,omitempty"`
	// Providers counts the class's resources by the provider versions they run (their
	// status.terraform.providerLock), e.g. while a provider upgrade rolls out.
	// +optional
	Providers []ProviderVersionCount `json:"providers,omitempty"`
}

// ProviderVersionCount is how many of a class's resources run one version of a provider.
type ProviderVersionCount struct {
	// Provider is the provider's source, e.g. hashicorp/random.
	Provider string `json:"provider"`
	// Version is the provider's version.
	Version string `json:"version"`
	// Resources counts the resources that run it.
	Resources int `json:"resources"`
}

// RolloutPolicy stages how a class's new revision reaches the resources that follow new
// revisions: a canary first, then batches, each once the one before is Ready and Synced;
// the rollout pauses on the first failure or refused plan.
type RolloutPolicy struct {
	// Canary is how many resources move to a new revision first, on their own (default 1;
	// 0 starts with a batch).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Canary *int32 `json:"canary,omitempty"`
	// MaxUnavailable is how many resources move at once after the canary: a number, or a
	// percentage of the resources that follow new revisions, rounded up (default 25%).
	// +optional
	// +kubebuilder:validation:XIntOrString
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// Paused stops moving resources to the revision rolling out until it is false again
	// (terraplane rollout pause, resume); resources already moving carry on.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// CanaryOf is the canary size, 1 when unset.
func (p *RolloutPolicy) CanaryOf() int {
	if p == nil || p.Canary == nil {
		return 1
	}
	return int(*p.Canary)
}

// MaxUnavailableOf is the batch size for a fleet of total resources: at least 1.
func (p *RolloutPolicy) MaxUnavailableOf(total int) int {
	v := intstr.FromString("25%")
	if p != nil && p.MaxUnavailable != nil {
		v = *p.MaxUnavailable
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, total, true)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// RolloutStatus is where the rollout of one revision stands.
type RolloutStatus struct {
	// Revision is the revision rolling out: the class's latest, or the one an undo went
	// back to.
	Revision string `json:"revision"`
	// StartedAt is when the rollout began.
	StartedAt metav1.Time `json:"startedAt"`
	// Wave counts the batches let onto the revision; the first is the canary.
	// +optional
	Wave int32 `json:"wave,omitempty"`
	// Admitted names the resources let onto the revision, in the order they were.
	// +optional
	Admitted []string `json:"admitted,omitempty"`
	// Updated counts the resources that follow new revisions and run this one, Ready and Synced.
	Updated int32 `json:"updated"`
	// Total counts the resources that follow new revisions.
	Total int32 `json:"total"`
	// Paused is why no more resources move: RolloutFailed (a resource that moved failed,
	// or its plan was refused) or RolloutPauseRequested (specTemplate.rollout.paused);
	// empty while the rollout goes on.
	// +optional
	Paused string `json:"paused,omitempty"`
	// Message says what paused the rollout.
	// +optional
	Message string `json:"message,omitempty"`
	// Skipped names the resources that had failed when the rollout was resumed: they no
	// longer pause it or hold its batches back.
	// +optional
	Skipped []string `json:"skipped,omitempty"`
	// ResumedAt is the terraplane.io/rollout-resumed-at value last acted on.
	// +optional
	ResumedAt string `json:"resumedAt,omitempty"`
	// CompletedAt is when every resource that follows new revisions ran the revision.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
}

// RevisionCount is one revision of a class and the class's resources on it.
type RevisionCount struct {
	// Name of the ClassRevision.
	Name string `json:"name"`
	// Revision is its number: 1 for the class's first, one more for each after.
	Revision int64 `json:"revision"`
	// CreatedAt is when the revision was made.
	// +optional
	CreatedAt metav1.Time `json:"createdAt,omitempty"`
	// Resources counts the resources that run it (their status.revision names it).
	Resources int `json:"resources"`
	// Ready counts those of them that are Ready and Synced.
	Ready int `json:"ready"`
	// Pending counts the resources told to run it (spec.revision) that do not yet.
	// +optional
	Pending int `json:"pending,omitempty"`
}

// ClassStatus is the status of a non-portable class of a Terraform kind.
type ClassStatus struct {
	ClassRevisions `json:",inline"`
	// Conditions: RolloutPaused says whether the rollout of a revision is paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TypeRolloutPaused is the class condition that says whether a rollout is paused.
const TypeRolloutPaused = "RolloutPaused"

// Reasons of the RolloutPaused condition (and of RolloutStatus.Paused).
const (
	// ReasonRolloutFailed: a resource that moved to the revision failed, or its plan was refused.
	ReasonRolloutFailed = "RolloutFailed"
	// ReasonRolloutPauseRequested: specTemplate.rollout.paused is true.
	ReasonRolloutPauseRequested = "RolloutPauseRequested"
	// ReasonRolloutProgressing: resources are moving to the revision.
	ReasonRolloutProgressing = "RolloutProgressing"
	// ReasonRolloutComplete: every resource that follows new revisions runs the revision.
	ReasonRolloutComplete = "RolloutComplete"
)
