package trace

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	"terraplane.io/terraplane/internal/kinds"
)

// objects parses YAML documents into unstructured objects.
func objects(t *testing.T, docs string) []client.Object {
	t.Helper()
	var out []client.Object
	for _, doc := range strings.Split(docs, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("fixture: %v\n%s", err, doc)
		}
		out = append(out, u)
	}
	return out
}

// categories are the discovery categories of the kinds the fixtures use.
var categories = map[string][]string{
	"Bucket.storage.terraplane.io":                 {"terraplane", "claim"},
	"Network.platform.example.org":                 {"terraplane", "claim"},
	"KubernetesCluster.compute.terraplane.io":      {"terraplane", "claim"},
	"BucketClass.storage.terraplane.io":            {"terraplane", "class"},
	"NetworkOffer.platform.example.org":            {"terraplane", "class"},
	"S3BucketClass.storage.aws.terraplane.io":      {"terraplane", "class"},
	"ModuleClass.terraform.terraplane.io":          {"terraplane", "class"},
	"S3Bucket.storage.aws.terraplane.io":           {"terraplane", "managed"},
	"Module.terraform.terraplane.io":               {"terraplane", "managed"},
	"Provider.aws.terraplane.io":                   {"terraplane", "provider"},
	"ProviderConfig.terraform.terraplane.io":       {"terraplane", "provider"},
	"ProviderConfig.kubernetes.terraplane.io":      {"terraplane", "provider"},
	"KubernetesApplication.workload.terraplane.io": {"terraplane", "workload"},
}

// tracer reads objs through a fake client; forbidden namespaces answer Get and List
// with Forbidden, as the API server does for a claimer.
func tracer(t *testing.T, objs []client.Object, forbidden ...string) *Tracer {
	t.Helper()
	c := fakeReader(objs, forbidden...)
	return &Tracer{Reader: c, Kinds: &KindInfo{Registry: kinds.NewRegistry(nil), Reader: c,
		Categories: func(gvk schema.GroupVersionKind) []string { return categories[gvk.GroupKind().String()] }}}
}

func fakeReader(objs []client.Object, forbidden ...string) client.WithWatch {
	deny := func(ns string, gvk schema.GroupVersionKind) error {
		for _, f := range forbidden {
			if f == ns || f == "*" && ns == "" {
				return apierrors.NewForbidden(schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}, "", fmt.Errorf("user alice may not read namespace %q", ns))
			}
		}
		return nil
	}
	return interceptor.NewClient(fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(objs...).Build(), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := deny(key.Namespace, obj.GetObjectKind().GroupVersionKind()); err != nil {
				return err
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			o := &client.ListOptions{}
			o.ApplyOptions(opts)
			if err := deny(o.Namespace, list.GetObjectKind().GroupVersionKind()); err != nil {
				return err
			}
			return c.List(ctx, list, opts...)
		},
	})
}

// flat is a tree as one line per node: indentation, Kind/namespace/name, and the
// columns a user reads.
func flat(n *Node) []string {
	var out []string
	var walk func(n *Node, depth int)
	walk = func(n *Node, depth int) {
		out = append(out, fmt.Sprintf("%s%s/%s/%s ready=%s synced=%s status=%s", strings.Repeat("  ", depth), n.Kind, n.Namespace, n.Name, n.Ready, n.Synced, n.Status()))
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return out
}

// bucketChain is a Bound Bucket claim in demo and everything it depends on in
// terraplane-system, its S3Bucket holding a plan that awaits approval.
const bucketChain = `apiVersion: storage.terraplane.io/v1alpha1
kind: Bucket
metadata: {name: photos, namespace: demo}
spec:
  classRef: {name: standard}
  resourceRef: {apiVersion: storage.aws.terraplane.io/v1alpha1, kind: S3Bucket, name: demo-photos-x1, namespace: terraplane-system}
  writeConnectionSecretToRef: {name: photos-bucket}
status:
  bindingPhase: Bound
  conditions:
  - {type: Ready, status: "True", reason: Available, message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}
  - {type: Synced, status: "True", reason: ReconcileSuccess, message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}
---
apiVersion: storage.terraplane.io/v1alpha1
kind: BucketClass
metadata: {name: standard, namespace: demo}
classRef: {apiVersion: storage.aws.terraplane.io/v1alpha1, kind: S3BucketClass, name: s3, namespace: terraplane-system}
---
apiVersion: storage.aws.terraplane.io/v1alpha1
kind: S3BucketClass
metadata: {name: s3, namespace: terraplane-system}
specTemplate: {providerRef: {name: minio}, forProvider: {}}
---
apiVersion: storage.aws.terraplane.io/v1alpha1
kind: S3Bucket
metadata: {name: demo-photos-x1, namespace: terraplane-system, uid: c3a05f84-0000-4000-8000-000000000001}
spec:
  providerRef: {name: minio}
  writeConnectionSecretToRef: {name: demo-photos-x1-conn, namespace: terraplane-system}
  forProvider: {}
status:
  conditions:
  - {type: Ready, status: "True", reason: Available, message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}
  - {type: Synced, status: "False", reason: AwaitingApproval, message: "plan 3f9a6c1e2b7d4a50 awaits approval", lastTransitionTime: "2026-01-01T00:00:00Z"}
  terraform:
    plan: {id: 3f9a6c1e2b7d4a50, reason: Update, add: 0, change: 1, destroy: 0, replace: 0, createdAt: "2026-01-01T00:00:00Z"}
    lastApply: {id: "1111aaaa2222bbbb", add: 1, change: 0, destroy: 0, replace: 0, time: "2026-01-01T00:00:00Z"}
---
apiVersion: aws.terraplane.io/v1alpha1
kind: Provider
metadata: {name: minio, namespace: terraplane-system}
spec: {region: us-east-1, credentialsSecretRef: {name: minio-creds}}
status:
  conditions:
  - {type: Ready, status: "True", reason: Available, message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}
---
apiVersion: v1
kind: Secret
metadata: {name: minio-creds, namespace: terraplane-system}
---
apiVersion: v1
kind: Secret
metadata: {name: demo-photos-x1-conn, namespace: terraplane-system}
---
apiVersion: v1
kind: Secret
metadata: {name: photos-bucket, namespace: demo}
---
apiVersion: terraform.terraplane.io/v1alpha1
kind: Plan
metadata: {name: tfplan-c3a05f84000040008000000000000001, namespace: terraplane-system}`
