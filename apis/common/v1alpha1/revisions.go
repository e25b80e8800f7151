package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
}
