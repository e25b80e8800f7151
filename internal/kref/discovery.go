package kref

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Discovery is what the API server serves, read once per command: a RESTMapper that
// knows short names, and each resource's categories.
type Discovery struct {
	// Mapper maps the names a user types to kinds and resources.
	Mapper meta.RESTMapper
	client discovery.CachedDiscoveryInterface
}

// Discover reads the API server's discovery lazily (on first use); warnings about
// ambiguous short names go to warn.
func Discover(cfg *rest.Config, warn io.Writer) (*Discovery, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	return newDiscovery(dc, warn), nil
}

func newDiscovery(dc discovery.DiscoveryInterface, warn io.Writer) *Discovery {
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, func(s string) {
		fmt.Fprintln(warn, "warning: "+s)
	})
	return &Discovery{Mapper: mapper, client: cached}
}

// Categories are the categories of a kind's resource (managed, claim, class, ...).
func (d *Discovery) Categories(gvk schema.GroupVersionKind) []string {
	r := d.resource(gvk)
	if r == nil {
		return nil
	}
	return r.Categories
}

func (d *Discovery) resource(gvk schema.GroupVersionKind) *metav1.APIResource {
	list, err := d.client.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	if err != nil {
		return nil
	}
	for i, r := range list.APIResources {
		if r.Kind == gvk.Kind && !strings.Contains(r.Name, "/") {
			return &list.APIResources[i]
		}
	}
	return nil
}

// Kinds lists the kinds a group version serves (subresources left out).
func (d *Discovery) Kinds(gv schema.GroupVersion) []schema.GroupVersionKind {
	list, err := d.client.ServerResourcesForGroupVersion(gv.String())
	if err != nil {
		return nil
	}
	var out []schema.GroupVersionKind
	for _, r := range list.APIResources {
		if !strings.Contains(r.Name, "/") {
			out = append(out, gv.WithKind(r.Kind))
		}
	}
	return out
}

// WithCategory lists the kinds (their preferred versions) in a category, such as every
// managed kind; a group discovery cannot read is left out.
func (d *Discovery) WithCategory(category string) ([]schema.GroupVersionKind, error) {
	lists, err := d.client.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	var out []schema.GroupVersionKind
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if slices.Contains(r.Categories, category) && slices.Contains(r.Verbs, "list") {
				out = append(out, gv.WithKind(r.Kind))
			}
		}
	}
	return out, nil
}
