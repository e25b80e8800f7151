package shard

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Lister lists every object of one kind (through the cache).
type Lister func(ctx context.Context) ([]client.Object, error)

// Source enqueues, each time this replica takes shards, the objects list finds in them:
// resources a replica that died or let go left for this one. Call it before Start.
func (s *Set) Source(list Lister) source.Source {
	sub := s.subscribe()
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-sub.wake:
				}
				shards := s.taken(sub)
				objs, err := list(ctx)
				if err != nil {
					log.FromContext(ctx).Error(err, "list resources of shards taken")
					s.retake(sub, shards)
					continue
				}
				for _, o := range objs {
					if shards[s.Of(o.GetUID())] {
						q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
					}
				}
			}
		}()
		return nil
	})
}
