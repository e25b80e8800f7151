package trace

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
)

// TestTracePool: a pool shows its members (traced as claims), then the claims it filled;
// claims of the kind that are neither are left out.
func TestTracePool(t *testing.T) {
	fixtures := `apiVersion: scaling.terraplane.io/v1alpha1
kind: ResourcePool
metadata: {name: warm, namespace: team-a}
spec:
  size: 2
  claimTemplate: {apiVersion: storage.terraplane.io/v1alpha1, kind: Bucket, spec: {classRef: {name: std}}}
status:
  conditions:
  - {type: Ready, status: "False", reason: Provisioning, message: "1 of 2", lastTransitionTime: "2026-01-01T00:00:00Z"}
  - {type: Synced, status: "True", reason: ReconcileSuccess, message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}
---
apiVersion: storage.terraplane.io/v1alpha1
kind: Bucket
metadata: {name: warm-b, namespace: team-a, labels: {terraplane.io/pool: warm}, creationTimestamp: "2026-01-01T00:00:02Z"}
spec: {writeConnectionSecretToRef: {name: warm-b}}
---
apiVersion: storage.terraplane.io/v1alpha1
kind: Bucket
metadata: {name: warm-a, namespace: team-a, labels: {terraplane.io/pool: warm}, creationTimestamp: "2026-01-01T00:00:01Z"}
spec:
  resourceRef: {apiVersion: storage.aws.terraplane.io/v1alpha1, kind: S3Bucket, name: bucket-m1, namespace: admin}
status:
  conditions:
  - {type: Ready, status: "True", reason: Available, message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}
---
apiVersion: storage.terraplane.io/v1alpha1
kind: Bucket
metadata: {name: app, namespace: team-a, annotations: {terraplane.io/pool-member: warm/warm-c/m3}}
spec:
  resourceRef: {apiVersion: storage.aws.terraplane.io/v1alpha1, kind: S3Bucket, name: bucket-m3, namespace: admin}
---
apiVersion: storage.terraplane.io/v1alpha1
kind: Bucket
metadata: {name: unrelated, namespace: team-a, annotations: {terraplane.io/pool-member: other/x/m9}}
---
apiVersion: storage.aws.terraplane.io/v1alpha1
kind: S3Bucket
metadata: {name: bucket-m1, namespace: admin}
---
apiVersion: storage.aws.terraplane.io/v1alpha1
kind: S3Bucket
metadata: {name: bucket-m3, namespace: admin}`
	n, err := tracer(t, objects(t, fixtures)).Trace(context.Background(), scalingv1.ResourcePoolGroupVersionKind, "team-a", "warm")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ResourcePool/team-a/warm ready=False synced=True status=Provisioning",
		"  Bucket/team-a/warm-a ready=True synced= status=Available",
		"    S3Bucket/admin/bucket-m1 ready= synced= status=",
		"  Bucket/team-a/warm-b ready= synced= status=",
		"    Secret/team-a/warm-b ready= synced= status=NotFound",
		"  Bucket/team-a/app ready= synced= status=",
		"    S3Bucket/admin/bucket-m3 ready= synced= status=",
	}
	if diff := cmp.Diff(want, flat(n)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
}
