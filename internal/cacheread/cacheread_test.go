package cacheread

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// storeInformers is a cache whose one informer shows store.
type storeInformers struct {
	cache.Informers
	store toolscache.Indexer
}

func (s storeInformers) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return storeInformer{store: s.store}, nil
}

// storeInformer is an informer that shows its store, as client-go's shared ones do.
type storeInformer struct {
	cache.Informer
	store toolscache.Indexer
}

func (s storeInformer) GetIndexer() toolscache.Indexer { return s.store }

// plainInformers is a cache whose informers keep no store of their own (as a cache of
// several namespaces).
type plainInformers struct{ cache.Informers }

func (plainInformers) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return struct{ cache.Informer }{}, nil
}

func configMaps() []*corev1.ConfigMap {
	return []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "one"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "two"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "three"}},
	}
}

func read(t *testing.T, src Source, obj client.Object, ns string) ([]string, []client.Object) {
	t.Helper()
	var names []string
	var objs []client.Object
	err := src.Each(context.Background(), obj, &corev1.ConfigMapList{}, ns, func(o client.Object) {
		names = append(names, o.GetNamespace()+"/"+o.GetName())
		objs = append(objs, o)
	})
	if err != nil {
		t.Fatalf("Each: %v", err)
	}
	slices.Sort(names)
	return names, objs
}

func TestEachReadsTheStoreInPlace(t *testing.T) {
	store := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	held := configMaps()
	for _, cm := range held {
		if err := store.Add(cm); err != nil {
			t.Fatal(err)
		}
	}
	src := Source{Informers: storeInformers{store: store}}
	names, objs := read(t, src, &corev1.ConfigMap{}, "a")
	if want := []string{"a/one", "a/two"}; !slices.Equal(names, want) {
		t.Errorf("namespace a: got %v, want %v", names, want)
	}
	for _, o := range objs {
		if !slices.ContainsFunc(held, func(cm *corev1.ConfigMap) bool { return client.Object(cm) == o }) {
			t.Errorf("%s is a copy, not the store's own object", o.GetName())
		}
	}
	if names, _ := read(t, src, &corev1.ConfigMap{}, ""); len(names) != 3 {
		t.Errorf("every namespace: got %v, want 3 objects", names)
	}
}

func TestEachListsWithoutAStore(t *testing.T) {
	var objs []client.Object
	for _, cm := range configMaps() {
		objs = append(objs, cm)
	}
	c := fake.NewClientBuilder().WithObjects(objs...).Build()
	for name, src := range map[string]Source{
		"no cache":              {Reader: c},
		"informers of no store": {Informers: plainInformers{}, Reader: c},
	} {
		t.Run(name, func(t *testing.T) {
			names, _ := read(t, src, &corev1.ConfigMap{}, "b")
			if want := []string{"b/three"}; !slices.Equal(names, want) {
				t.Errorf("got %v, want %v", names, want)
			}
		})
	}
	t.Run("no object to find an informer by", func(t *testing.T) {
		names, _ := read(t, Source{Informers: plainInformers{}, Reader: c}, nil, "")
		if len(names) != 3 {
			t.Errorf("got %v, want 3 objects", names)
		}
	})
}
