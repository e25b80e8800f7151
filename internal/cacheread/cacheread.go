package cacheread

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Source reads one manager's cached objects.
type Source struct {
	// Informers is the manager's cache; nil (a test's client) reads through Reader.
	Informers cache.Informers
	// Reader lists when the cache keeps no index of its own (a cache of several
	// namespaces) or there is none.
	Reader client.Reader
}

// indexed is an informer that shows its store: client-go's shared informers do.
type indexed interface {
	GetIndexer() toolscache.Indexer
}

// Each calls fn with every object of obj's kind held in namespace ns ("" for every
// namespace). The objects are the cache's own: fn only reads them. Without an indexed
// cache, or with obj nil, it lists into list, a list of obj's kind, without copies.
func (s Source) Each(ctx context.Context, obj client.Object, list client.ObjectList, ns string, fn func(client.Object)) error {
	if idx := s.indexer(ctx, obj); idx != nil {
		items := idx.List()
		if ns != "" {
			var err error
			if items, err = idx.ByIndex(toolscache.NamespaceIndex, ns); err != nil {
				return fmt.Errorf("read %T in namespace %s: %w", obj, ns, err)
			}
		}
		for _, it := range items {
			if o, ok := it.(client.Object); ok {
				fn(o)
			}
		}
		return nil
	}
	if err := s.Reader.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	return meta.EachListItem(list, func(o runtime.Object) error {
		if co, ok := o.(client.Object); ok {
			fn(co)
		}
		return nil
	})
}

// indexer is the store of obj's informer; nil when there is no cache, or its informer
// keeps no store of its own.
func (s Source) indexer(ctx context.Context, obj client.Object) toolscache.Indexer {
	if s.Informers == nil || obj == nil {
		return nil
	}
	inf, err := s.Informers.GetInformer(ctx, obj, cache.BlockUntilSynced(true))
	if err != nil {
		return nil
	}
	if i, ok := inf.(indexed); ok {
		return i.GetIndexer()
	}
	return nil
}
