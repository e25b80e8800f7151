package kref

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	kubetesting "k8s.io/client-go/testing"
)

// served is what a fake API server's discovery serves: a claim kind with a short name,
// its class, a managed kind (with its status subresource) and a Provider.
func served() *Discovery {
	fake := &fakediscovery.FakeDiscovery{Fake: &kubetesting.Fake{}}
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	fake.Resources = []*metav1.APIResourceList{{
		GroupVersion: "cli.example.org/v1alpha1",
		APIResources: []metav1.APIResource{
			{Name: "networks", SingularName: "network", Kind: "Network", Namespaced: true, ShortNames: []string{"cnet"}, Categories: []string{"terraplane", "claim"}, Verbs: all},
			{Name: "networkoffers", SingularName: "networkoffer", Kind: "NetworkOffer", Namespaced: true, Categories: []string{"terraplane", "class"}, Verbs: all},
		},
	}, {
		GroupVersion: "storage.aws.terraplane.io/v1alpha1",
		APIResources: []metav1.APIResource{
			{Name: "s3buckets", SingularName: "s3bucket", Kind: "S3Bucket", Namespaced: true, Categories: []string{"terraplane", "managed"}, Verbs: all},
			{Name: "s3buckets/status", Kind: "S3Bucket", Namespaced: true, Verbs: []string{"get", "update", "patch"}},
		},
	}, {
		GroupVersion: "aws.terraplane.io/v1alpha1",
		APIResources: []metav1.APIResource{
			{Name: "providers", SingularName: "provider", Kind: "Provider", Namespaced: true, Categories: []string{"terraplane", "provider"}, Verbs: all},
		},
	}}
	return newDiscovery(fake, io.Discard)
}

func TestDiscovery(t *testing.T) {
	d := served()
	gvk := func(group, kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: group, Version: "v1alpha1", Kind: kind}
	}
	for arg, want := range map[string]schema.GroupVersionKind{
		"cnet": gvk("cli.example.org", "Network"), "CNET": gvk("cli.example.org", "Network"),
		"networkoffers": gvk("cli.example.org", "NetworkOffer"), "S3Bucket": gvk("storage.aws.terraplane.io", "S3Bucket"),
	} {
		m, err := Mapping(d.Mapper, arg)
		if err != nil {
			t.Errorf("%s: %v", arg, err)
			continue
		}
		if diff := cmp.Diff(want, m.GroupVersionKind); diff != "" {
			t.Errorf("%s (-want +got):\n%s", arg, diff)
		}
	}
	if diff := cmp.Diff([]string{"terraplane", "managed"}, d.Categories(gvk("storage.aws.terraplane.io", "S3Bucket"))); diff != "" {
		t.Errorf("categories of the resource, not of its status subresource (-want +got):\n%s", diff)
	}
	if got := d.Categories(gvk("nowhere.example.org", "Thing")); got != nil {
		t.Errorf("an unknown kind has no categories, got %v", got)
	}
	if diff := cmp.Diff([]schema.GroupVersionKind{gvk("storage.aws.terraplane.io", "S3Bucket")}, d.Kinds(schema.GroupVersion{Group: "storage.aws.terraplane.io", Version: "v1alpha1"})); diff != "" {
		t.Errorf("kinds of a group, subresources left out (-want +got):\n%s", diff)
	}
	managed, err := d.WithCategory(CategoryManaged)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]schema.GroupVersionKind{gvk("storage.aws.terraplane.io", "S3Bucket")}, managed); diff != "" {
		t.Errorf("managed kinds (-want +got):\n%s", diff)
	}
}
