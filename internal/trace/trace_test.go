package trace

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var (
	bucketGVK  = schema.GroupVersionKind{Group: "storage.terraplane.io", Version: "v1alpha1", Kind: "Bucket"}
	networkGVK = schema.GroupVersionKind{Group: "platform.example.org", Version: "v1alpha1", Kind: "Network"}
	appGVK     = schema.GroupVersionKind{Group: "workload.terraplane.io", Version: "v1alpha1", Kind: "KubernetesApplication"}
	s3GVK      = schema.GroupVersionKind{Group: "storage.aws.terraplane.io", Version: "v1alpha1", Kind: "S3Bucket"}
)

// TestTraceClaim walks a compiled-in claim with the rights of an admin and of a claimer
// who may read only the claim's namespace.
func TestTraceClaim(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fixtures  string
		forbidden []string
		root      schema.GroupVersionKind
		want      []string
	}{{
		name: "admin sees the whole chain and the plan awaiting approval", fixtures: bucketChain, root: bucketGVK,
		want: []string{
			"Bucket/demo/photos ready=True synced=True status=Available",
			"  BucketClass/demo/standard ready= synced= status=",
			"    S3BucketClass/terraplane-system/s3 ready= synced= status=",
			"  S3Bucket/terraplane-system/demo-photos-x1 ready=True synced=False status=AwaitingApproval",
			"    Provider/terraplane-system/minio ready=True synced= status=Available",
			"      Secret/terraplane-system/minio-creds ready= synced= status=",
			"    Secret/terraplane-system/demo-photos-x1-conn ready= synced= status=",
			"    Plan/terraplane-system/tfplan-c3a05f84000040008000000000000001 ready= synced= status=AwaitingApproval",
			"  Secret/demo/photos-bucket ready= synced= status=",
		},
	}, {
		name: "a claimer sees what lies in the admin namespace as forbidden, and the rest", fixtures: bucketChain, root: bucketGVK,
		forbidden: []string{"terraplane-system"},
		want: []string{
			"Bucket/demo/photos ready=True synced=True status=Available",
			"  BucketClass/demo/standard ready= synced= status=",
			"    S3BucketClass/terraplane-system/s3 ready= synced= status=Forbidden",
			"  S3Bucket/terraplane-system/demo-photos-x1 ready= synced= status=Forbidden",
			"  Secret/demo/photos-bucket ready= synced= status=",
		},
	}, {
		name: "a missing class and Secret are NotFound, and an unbound claim has no resource", root: bucketGVK,
		fixtures: `apiVersion: storage.terraplane.io/v1alpha1
kind: Bucket
metadata: {name: photos, namespace: demo}
spec: {classRef: {name: gone}, writeConnectionSecretToRef: {name: photos-bucket}}
status:
  bindingPhase: Unbound
  conditions:
  - {type: Synced, status: "False", reason: ClassNotFound, message: "no BucketClass gone", lastTransitionTime: "2026-01-01T00:00:00Z"}`,
		want: []string{
			"Bucket/demo/photos ready= synced=False status=ClassNotFound",
			"  BucketClass/demo/gone ready= synced= status=NotFound",
			"  Secret/demo/photos-bucket ready= synced= status=NotFound",
		},
	}, {
		name: "a defined claim kind: its class kind from the ClaimDefinition, a Module's ProviderConfigs and their credentials", root: networkGVK,
		fixtures: `apiVersion: apiextensions.terraplane.io/v1alpha1
kind: ClaimDefinition
metadata: {name: networks.platform.example.org}
spec: {group: platform.example.org, names: {kind: Network, plural: networks}, classKind: NetworkOffer}
---
apiVersion: platform.example.org/v1alpha1
kind: Network
metadata: {name: net, namespace: team-a}
spec:
  classRef: {name: small}
  resourceRef: {apiVersion: terraform.terraplane.io/v1alpha1, kind: Module, name: team-a-net-x, namespace: platform}
status:
  bindingPhase: Bound
  conditions:
  - {type: Ready, status: "False", reason: Creating, message: "terraform apply", lastTransitionTime: "2026-01-01T00:00:00Z"}
---
apiVersion: platform.example.org/v1alpha1
kind: NetworkOffer
metadata: {name: small, namespace: team-a}
classRef: {apiVersion: terraform.terraplane.io/v1alpha1, kind: ModuleClass, name: network, namespace: platform}
---
apiVersion: terraform.terraplane.io/v1alpha1
kind: ModuleClass
metadata: {name: network, namespace: platform}
specTemplate: {source: {configMap: {name: network-module}}}
---
apiVersion: terraform.terraplane.io/v1alpha1
kind: Module
metadata: {name: team-a-net-x, namespace: platform}
spec:
  source: {configMap: {name: network-module}}
  providerConfigRefs: [{name: random}, {name: gone}]
status:
  conditions:
  - {type: Synced, status: "False", reason: ReconcileError, message: "Error: boom", lastTransitionTime: "2026-01-01T00:00:00Z"}
---
apiVersion: terraform.terraplane.io/v1alpha1
kind: ProviderConfig
metadata: {name: random, namespace: platform}
spec:
  source: hashicorp/random
  credentials:
  - {env: A, secretKeyRef: {name: random-creds, key: a}}
  - {env: B, secretKeyRef: {name: random-creds, key: b}}
  - {env: C, secretKeyRef: {name: other-creds, key: c}}
---
apiVersion: v1
kind: Secret
metadata: {name: random-creds, namespace: platform}`,
		want: []string{
			"Network/team-a/net ready=False synced= status=Creating",
			"  NetworkOffer/team-a/small ready= synced= status=",
			"    ModuleClass/platform/network ready= synced= status=",
			"  Module/platform/team-a-net-x ready= synced=False status=ReconcileError",
			"    ProviderConfig/platform/random ready= synced= status=",
			"      Secret/platform/random-creds ready= synced= status=",
			"      Secret/platform/other-creds ready= synced= status=NotFound",
			"    ProviderConfig/platform/gone ready= synced= status=NotFound",
		},
	}, {
		name: "a portable class that names itself does not loop", root: bucketGVK,
		fixtures: `apiVersion: storage.terraplane.io/v1alpha1
kind: Bucket
metadata: {name: photos, namespace: demo}
spec: {classRef: {name: loop}}
---
apiVersion: storage.terraplane.io/v1alpha1
kind: BucketClass
metadata: {name: loop, namespace: demo}
classRef: {apiVersion: storage.terraplane.io/v1alpha1, kind: BucketClass, name: loop}`,
		want: []string{
			"Bucket/demo/photos ready= synced= status=",
			"  BucketClass/demo/loop ready= synced= status=",
			"    BucketClass/demo/loop ready= synced= status=",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			root := objects(t, tc.fixtures)
			var ns, name string
			for _, o := range root {
				if o.GetObjectKind().GroupVersionKind() == tc.root {
					ns, name = o.GetNamespace(), o.GetName()
				}
			}
			n, err := tracer(t, root, tc.forbidden...).Trace(context.Background(), tc.root, ns, name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, flat(n)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTraceRootErrors: only the object traced must be readable.
func TestTraceRootErrors(t *testing.T) {
	tr := tracer(t, objects(t, bucketChain), "demo")
	if _, err := tr.Trace(context.Background(), bucketGVK, "demo", "photos"); err == nil {
		t.Error("a root the caller may not read is an error")
	}
	if _, err := tracer(t, objects(t, bucketChain)).Trace(context.Background(), bucketGVK, "demo", "nope"); err == nil {
		t.Error("a root that does not exist is an error")
	}
	n, err := tracer(t, objects(t, bucketChain)).Trace(context.Background(), s3GVK, "terraplane-system", "demo-photos-x1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("S3Bucket/terraplane-system/demo-photos-x1 ready=True synced=False status=AwaitingApproval", flat(n)[0]); diff != "" || len(n.Children) != 3 {
		t.Errorf("a managed resource is traced from itself: %v", flat(n))
	}
}

// TestTraceApplication walks a KubernetesApplication: its cluster once, its own
// resources (not another application's), a resource's Secrets, and a resource placed
// elsewhere than its application.
func TestTraceApplication(t *testing.T) {
	fixtures := `apiVersion: workload.terraplane.io/v1alpha1
kind: KubernetesApplication
metadata: {name: web, namespace: team-a, uid: app-1}
spec: {providerConfigRef: {name: target, namespace: platform}, resourceSelector: {}}
status:
  state: Submitted
  clusterRef: {kind: ProviderConfig, name: target, namespace: platform}
  conditions:
  - {type: Ready, status: "True", reason: Submitted, message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}
---
apiVersion: workload.terraplane.io/v1alpha1
kind: KubernetesApplicationResource
metadata:
  name: web-deploy
  namespace: team-a
  ownerReferences: [{apiVersion: workload.terraplane.io/v1alpha1, kind: KubernetesApplication, name: web, uid: app-1, controller: true}]
spec:
  template: {apiVersion: apps/v1, kind: Deployment, metadata: {name: web}}
  secrets: [{name: db-conn}]
  targetRef: {kind: ProviderConfig, name: target, namespace: platform}
status:
  state: Pending
  clusterRef: {kind: ProviderConfig, name: target, namespace: platform}
  conditions:
  - {type: Synced, status: "False", reason: SecretNotFound, message: "db-conn", lastTransitionTime: "2026-01-01T00:00:00Z"}
---
apiVersion: workload.terraplane.io/v1alpha1
kind: KubernetesApplicationResource
metadata:
  name: web-stray
  namespace: team-a
  ownerReferences: [{apiVersion: workload.terraplane.io/v1alpha1, kind: KubernetesApplication, name: web, uid: app-1, controller: true}]
spec:
  template: {apiVersion: v1, kind: ConfigMap, metadata: {name: web}}
  targetRef: {kind: KubernetesCluster, name: edge}
---
apiVersion: workload.terraplane.io/v1alpha1
kind: KubernetesApplicationResource
metadata:
  name: other-app
  namespace: team-a
  ownerReferences: [{apiVersion: workload.terraplane.io/v1alpha1, kind: KubernetesApplication, name: other, uid: app-2, controller: true}]
spec:
  template: {apiVersion: v1, kind: ConfigMap, metadata: {name: other}}
---
apiVersion: kubernetes.terraplane.io/v1alpha1
kind: ProviderConfig
metadata: {name: target, namespace: platform}
spec: {credentialsSecretRef: {name: target-kubeconfig}}
---
apiVersion: compute.terraplane.io/v1alpha1
kind: KubernetesCluster
metadata: {name: edge, namespace: team-a}
spec: {writeConnectionSecretToRef: {name: edge-conn}}`
	for _, tc := range []struct {
		name      string
		forbidden []string
		want      []string
	}{{
		name: "admin",
		want: []string{
			"KubernetesApplication/team-a/web ready=True synced= status=Submitted",
			"  ProviderConfig/platform/target ready= synced= status=",
			"    Secret/platform/target-kubeconfig ready= synced= status=NotFound",
			"  KubernetesApplicationResource/team-a/web-deploy ready= synced=False status=SecretNotFound",
			"    Secret/team-a/db-conn ready= synced= status=NotFound",
			"  KubernetesApplicationResource/team-a/web-stray ready= synced= status=",
			"    KubernetesCluster/team-a/edge ready= synced= status=",
			"      Secret/team-a/edge-conn ready= synced= status=NotFound",
		},
	}, {
		name: "a tenant who may not read the ProviderConfig's namespace", forbidden: []string{"platform"},
		want: []string{
			"KubernetesApplication/team-a/web ready=True synced= status=Submitted",
			"  ProviderConfig/platform/target ready= synced= status=Forbidden",
			"  KubernetesApplicationResource/team-a/web-deploy ready= synced=False status=SecretNotFound",
			"    Secret/team-a/db-conn ready= synced= status=NotFound",
			"  KubernetesApplicationResource/team-a/web-stray ready= synced= status=",
			"    KubernetesCluster/team-a/edge ready= synced= status=",
			"      Secret/team-a/edge-conn ready= synced= status=NotFound",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := tracer(t, objects(t, fixtures), tc.forbidden...).Trace(context.Background(), appGVK, "team-a", "web")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, flat(n)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunnerSeam: a Runner adds its node under each managed resource, and only there.
func TestRunnerSeam(t *testing.T) {
	tr := tracer(t, objects(t, bucketChain))
	var asked []string
	tr.Runner = func(_ context.Context, mg *unstructured.Unstructured) *Node {
		asked = append(asked, mg.GetName())
		return &Node{Kind: "Runner", Namespace: mg.GetNamespace(), Name: "pool-0"}
	}
	n, err := tr.Trace(context.Background(), bucketGVK, "demo", "photos")
	if err != nil {
		t.Fatal(err)
	}
	mg := n.Children[1]
	if diff := cmp.Diff([]string{"demo-photos-x1"}, asked); diff != "" {
		t.Errorf("runner asked for (-want +got):\n%s", diff)
	}
	if last := mg.Children[len(mg.Children)-1]; last.Kind != "Runner" {
		t.Errorf("the runner is the managed resource's last child, got %+v", last)
	}
}

// TestTraceNodesAreObjects: every node of a trace is an object kubectl get finds by its
// apiVersion, kind, namespace and name (the plan is its Plan object, not its id), or is
// marked derived.
func TestTraceNodesAreObjects(t *testing.T) {
	tr := tracer(t, objects(t, bucketChain))
	root, err := tr.Trace(context.Background(), bucketGVK, "demo", "photos")
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *Node)
	walk = func(n *Node) {
		if !n.Derived {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion(n.APIVersion)
			u.SetKind(n.Kind)
			if n.APIVersion == "" || tr.Reader.Get(context.Background(), client.ObjectKey{Namespace: n.Namespace, Name: n.Name}, u) != nil {
				t.Errorf("node %s %s %s/%s is no object kubectl get finds, and is not marked derived", n.APIVersion, n.Kind, n.Namespace, n.Name)
			}
		}
		if n.Plan != nil && n.Plan.ID != "3f9a6c1e2b7d4a50" {
			t.Errorf("plan node %s: id %q, want 3f9a6c1e2b7d4a50", n.Name, n.Plan.ID)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
}
