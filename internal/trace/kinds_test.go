package trace

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"terraplane.io/terraplane/internal/kinds"
)

// served are the kinds discovery serves in the groups of TestKindInfo.
var served = map[string][]schema.GroupVersionKind{
	"platform.example.org": {{Group: "platform.example.org", Version: "v1alpha1", Kind: "Network"}, {Group: "platform.example.org", Version: "v1alpha1", Kind: "NetworkOffer"}},
	"multi.example.org": {{Group: "multi.example.org", Version: "v1alpha1", Kind: "Queue"}, {Group: "multi.example.org", Version: "v1alpha1", Kind: "QueueClass"},
		{Group: "multi.example.org", Version: "v1alpha1", Kind: "Topic"}, {Group: "multi.example.org", Version: "v1alpha1", Kind: "TopicClass"}},
}

func TestKindInfo(t *testing.T) {
	defs := objects(t, `apiVersion: apiextensions.terraplane.io/v1alpha1
kind: ClaimDefinition
metadata: {name: networks.platform.example.org}
spec: {group: platform.example.org, names: {kind: Network, plural: networks}, classKind: NetworkOffer}`)
	gvk := func(group, kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: group, Version: "v1alpha1", Kind: kind}
	}
	ctx := context.Background()
	info := func(forbidden ...string) *KindInfo {
		return &KindInfo{Registry: kinds.NewRegistry(nil), Reader: fakeReader(defs, forbidden...),
			Categories: func(gvk schema.GroupVersionKind) []string { return categories[gvk.GroupKind().String()] },
			GroupKinds: func(gv schema.GroupVersion) []schema.GroupVersionKind { return served[gv.Group] }}
	}
	t.Run("ClassOf", func(t *testing.T) {
		for _, tc := range []struct {
			name      string
			claim     schema.GroupVersionKind
			forbidden []string
			want      schema.GroupVersionKind
		}{
			{"compiled in", bucketGVK, nil, gvk("storage.terraplane.io", "BucketClass")},
			{"from its ClaimDefinition", networkGVK, nil, gvk("platform.example.org", "NetworkOffer")},
			{"the one class kind the group serves, when the ClaimDefinitions may not be read", networkGVK, []string{"*"}, gvk("platform.example.org", "NetworkOffer")},
			{"<Kind>Class when the group serves several class kinds", gvk("multi.example.org", "Queue"), nil, gvk("multi.example.org", "QueueClass")},
			{"<Kind>Class when discovery knows none", gvk("other.example.org", "Queue"), nil, gvk("other.example.org", "QueueClass")},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if diff := cmp.Diff(tc.want, info(tc.forbidden...).ClassOf(ctx, tc.claim)); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	})
	t.Run("ProviderOf", func(t *testing.T) {
		for _, tc := range []struct {
			managed, want schema.GroupVersionKind
		}{
			{s3GVK, gvk("aws.terraplane.io", "Provider")},
			{moduleGVK, gvk("terraform.terraplane.io", "ProviderConfig")},
			{gvk("database.example.terraplane.io", "Thing"), gvk("example.terraplane.io", "Provider")},
		} {
			if diff := cmp.Diff(tc.want, info().ProviderOf(tc.managed)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.managed.Kind, diff)
			}
		}
	})
	t.Run("Role", func(t *testing.T) {
		for _, tc := range []struct {
			gvk  schema.GroupVersionKind
			want Role
		}{
			{bucketGVK, RoleClaim}, {networkGVK, RoleClaim}, {s3GVK, RoleManaged}, {gvk("aws.terraplane.io", "Provider"), RoleProvider},
			{gvk("storage.terraplane.io", "BucketClass"), RoleClass}, {appGVK, RoleApplication},
			{gvk("workload.terraplane.io", "KubernetesApplicationResource"), RoleApplicationResource}, {gvk("", "ConfigMap"), RoleOther},
		} {
			if got := info().Role(tc.gvk); got != tc.want {
				t.Errorf("%s: role %d, want %d", tc.gvk.Kind, got, tc.want)
			}
		}
	})
	t.Run("Qualify", func(t *testing.T) {
		for kind, want := range map[string]bool{"Provider": true, "ProviderConfig": true, "S3Bucket": false, "Bucket": false} {
			if got := info().Qualify(gvk("x.terraplane.io", kind)); got != want {
				t.Errorf("%s: qualify %v, want %v", kind, got, want)
			}
		}
	})
}
