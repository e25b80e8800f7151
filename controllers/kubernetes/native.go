package kubernetes

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/controllers/managed"
	"terraplane.io/terraplane/internal/resource"
)

// native is what the Connectors of native (non-Terraform) managed kinds share: the
// control cluster, the target clusters and the events.
type native struct {
	client   client.Client
	targets  *Targets
	opts     Options
	recorder resource.Recorder
}

// managedKind is how the managed reconciler serves a native kind: on the elected leader,
// each reconcile's calls to target clusters bounded by RemoteTimeout, and Ready=False
// when an observation fails (a cluster that does not answer), which the scheduler relies
// on.
func (n native) managedKind(name string, newObj func() resource.Managed, newList func() client.ObjectList, c managed.Connector) managed.Kind {
	return managed.Kind{Name: name, New: newObj, NewList: newList, Connector: c, Retries: func(resource.Managed) resource.Retries { return n.opts.Retries() },
		Timeout: n.opts.RemoteTimeout, MaxConcurrentReconciles: n.opts.MaxConcurrentReconciles, Recorder: n.recorder}
}
