package v1alpha1

// PoolLabel marks a claim as a member of the ResourcePool it names.
const PoolLabel = "terraplane.io/pool"

// PlacedAtAnnotation on a KubernetesCluster member of an autoscaled pool records when
// the scheduler last placed an application on it (RFC 3339): the pool counts the member
// busy from then, so that it never removes a cluster an application is being placed on.
const PlacedAtAnnotation = "terraplane.io/placed-at"

// Annotations users and Terraplane set on its objects.
const (
	// CreatePendingAnnotation records when a create started: on the state lock's Lease while
	// the create runs, removed once its outcome is saved, and on the managed resource once
	// a create was interrupted. Found on a resource with no state, it means a create was
	// interrupted and may have made things terraform never recorded.
	CreatePendingAnnotation = "terraplane.io/create-pending"
	// CreateAgainAnnotation set to "true" on a managed resource lets an interrupted create
	// run again, or a resource whose state is missing create everything again; it is used
	// once.
	CreateAgainAnnotation = "terraplane.io/create-again"
	// RequestedAtAnnotation, given a new value (a time, say), asks a managed resource for a
	// plan now rather than at the next drift interval, as `kubectl annotate --overwrite`
	// does; status.terraform.lastHandledRequest says when it has been answered.
	RequestedAtAnnotation = "terraplane.io/requested-at"
	// AbandonAnnotation set to "true" on a Terraform managed resource makes its deletion
	// release it whatever its reclaim policy: nothing is destroyed, and the external
	// objects and the Terraform state Secret are kept.
	AbandonAnnotation = "terraplane.io/abandon"
	// AdoptedAnnotation marks a managed resource whose state was brought in from elsewhere
	// (`terraplane migrate`): its first plan must change nothing, or nothing is applied.
	AdoptedAnnotation = "terraplane.io/adopted"
	// PausedAnnotation set to "true" makes the managed reconciler leave a resource alone.
	PausedAnnotation = "terraplane.io/paused"
	// SelectedClusterAnnotation on a claim whose class binds on first consumer names the
	// cluster chosen for it, as <kind>/<namespace>/<name>: the claim reconciler writes the
	// cluster of the first scheduled application using the claim's Secret, unless a user set
	// it first.
	SelectedClusterAnnotation = "terraplane.io/selected-cluster"
	// SelectedClusterLabelsAnnotation records, as a JSON object, the labels the selected
	// cluster had when it was chosen; the class's configurator always sees these.
	SelectedClusterLabelsAnnotation = "terraplane.io/selected-cluster-labels"
	// RemoteOwnerAnnotation on an object in a target cluster holds the UID of the
	// KubernetesApplicationResource (or kubernetes.terraplane.io Object) that created it;
	// neither ever touches a remote object carrying another UID.
	RemoteOwnerAnnotation = "workload.terraplane.io/resource-uid"
	// RolloutResumedAtAnnotation, given a new value on a class (terraplane rollout resume),
	// resumes a rollout paused by a failure: the resources failing then no longer hold it.
	RolloutResumedAtAnnotation = "terraplane.io/rollout-resumed-at"
	// RolloutUndoFromAnnotation and RolloutUndoToAnnotation on a class (terraplane rollout
	// undo) roll its resources back from one revision to another for as long as the first
	// is the class's latest.
	RolloutUndoFromAnnotation = "terraplane.io/rollout-undo-from"
	// RolloutUndoToAnnotation: see RolloutUndoFromAnnotation.
	RolloutUndoToAnnotation = "terraplane.io/rollout-undo-to"
	// PoolMemberTakenByAnnotation on a ResourcePool member records the claim it was
	// handed out to, as <claim name>/<claim UID>. Writing it (an update checked against
	// the member's resourceVersion) is the hand-out's single commit point: a member
	// carrying it is never handed out again.
	PoolMemberTakenByAnnotation = "terraplane.io/pool-taken-by"
	// PoolMemberAnnotation on a claim filled from a ResourcePool records the member it
	// took, as <pool>/<member name>/<member UID>; the member's names (bucket names, say)
	// stay the resource's.
	PoolMemberAnnotation = "terraplane.io/pool-member"
	// LockInfoAnnotation is where terraform's kubernetes backend keeps a state lock's
	// details on its Lease (Terraplane writes its locks in the same format).
	LockInfoAnnotation = "app.terraform.io/lock-info"
)
