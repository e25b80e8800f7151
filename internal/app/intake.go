package app

import (
	"terraplane.io/terraplane/internal/intake"
	"terraplane.io/terraplane/internal/shard"
)

// creatingPerProcess is how many new resources per terraform process of the fleet may
// wait for their first apply at once in a namespace: enough to keep every process busy,
// few enough that a burst of claims does not crowd out the first ones' applies.
const creatingPerProcess = 2

// intakeGate paces claim intake to opts.MaxCreatingPerNamespace; nil when uncapped. The
// default cap follows the terraform processes of every replica holding shards.
func intakeGate(opts Options, shards *shard.Set) *intake.Gate {
	if opts.MaxCreatingPerNamespace < 0 {
		return nil
	}
	if opts.MaxCreatingPerNamespace > 0 {
		return intake.New(func() int { return opts.MaxCreatingPerNamespace })
	}
	perReplica := creatingPerProcess * max(1, opts.Engine.MaxConcurrent)
	return intake.New(func() int { return perReplica * shards.Members() })
}
