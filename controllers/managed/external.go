package managed

import (
	"context"
	"time"

	"terraplane.io/terraplane/internal/resource"
)

// Connector is one managed kind's way to its external resources.
type Connector interface {
	// Connect resolves what observing and applying mg needs (its provider and
	// credentials: a rendered Terraform workspace, a target cluster's client) and returns
	// a client of mg's external resource for this reconcile.
	Connect(ctx context.Context, mg resource.Managed) (External, error)
	// Delete deletes mg's external resource as its reclaim and management policies say,
	// and what the kind keeps for it. It connects only when it has to, so that a resource
	// whose provider or cluster is gone, or that never got as far as an external
	// resource, can still be deleted. The reconciler removes the finalizer once it
	// returns nil.
	Delete(ctx context.Context, mg resource.Managed) error
}

// External is a client of one managed resource's external resource, connected for one
// reconcile. Errors are the typed errors of internal/resource, or any other error
// (retried with backoff); the reconciler maps them to conditions.
type External interface {
	// Observe reads the external resource and says whether it needs an apply.
	Observe(ctx context.Context, mg resource.Managed) (Observation, error)
	// Apply creates or updates the external resource to match mg's spec. It returns
	// what it did also when it fails: the record of a run that failed is written too.
	Apply(ctx context.Context, mg resource.Managed) (Applied, error)
}

// Observation is what Observe found.
type Observation struct {
	// UpToDate says the external resource matches the spec: there is nothing to apply.
	UpToDate bool
	// Settled says nothing changed since a reconcile last recorded its outcome (a
	// Terraform resource between drift checks): the conditions it wrote stand, now for
	// the current generation, and no other status is written. It implies UpToDate.
	Settled bool
	// RequeueAfter is when to look at a settled resource again.
	RequeueAfter time.Duration
	// ConnectionDetails of an up-to-date resource go to its connection Secret; nil leaves
	// the Secret as it is.
	ConnectionDetails map[string][]byte
}

// Applied is what Apply did.
type Applied struct {
	// ConnectionDetails go to the connection Secret; nil leaves the Secret as it is.
	ConnectionDetails map[string][]byte
	// Run is the record of what the Apply ran, which the reconciler writes with the
	// outcome; nil when the kind keeps none.
	Run *Run
}

// Progressing is an External whose Apply may write the resource's status before it
// ends, as a Terraform run that found its external resource deleted does before it
// recreates it, so that the status is true while the run lasts.
type Progressing interface {
	// Progress gives the External the function that writes mg's status as it stands.
	Progress(write func(ctx context.Context) error)
}
