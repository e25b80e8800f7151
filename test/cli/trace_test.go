package cli

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// TestTraceBucketClaim traces a Bound Bucket claim as an admin and as a claimer with
// rights in the claim's namespace only, whose kubeconfig context names that namespace.
// The admin sees the runner Deployment of the resource's pool.
func TestTraceBucketClaim(t *testing.T) {
	g := NewWithT(t)
	const ns, plan = "cli-trace-bucket", "3f9a6c1e2b7d4a50"
	mg := bucketChain(t, ns, "photos", plan)
	s3 := &awsstoragev1.S3Bucket{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: adminNS, Name: mg}, s3)).To(Succeed())
	labels := map[string]string{"app.kubernetes.io/name": "terraplane-runner", "terraplane.io/runner-pool": "photos"}
	create(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "terraplane-runner-photos"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "runner", Image: "terraplane"}}}}},
		Status: appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1}})
	if _, err := env.Tenant(context.Background(), "alice", ns); err != nil {
		t.Fatal(err)
	}
	admin := userEnv(t, "KUBECONFIG="+env.ControlPlane.Kubeconfig)

	By(t, "an admin sees the whole chain, down to the plan awaiting approval")
	g.Expect(traced(t, admin, "bucket/photos", "-n", ns)).To(Equal([]string{
		"Bucket/" + ns + "/photos Available",
		"  BucketClass/" + ns + "/photos-standard ",
		"    S3BucketClass/" + adminNS + "/photos-s3 ",
		"  S3Bucket/" + adminNS + "/" + mg + " AwaitingApproval",
		"    Provider/" + adminNS + "/photos-minio Available",
		"      Secret/" + adminNS + "/photos-creds ",
		"    Secret/" + adminNS + "/" + mg + " ",
		"    Plan/" + adminNS + "/" + resource.PlanName(s3) + " AwaitingApproval",
		"    Deployment/" + adminNS + "/terraplane-runner-photos Running",
		"  Secret/" + ns + "/photos-bucket ",
	}))
	r := terraplane(t, admin, "trace", "Buckets", "photos", "-n", ns, "-o", "wide")
	g.Expect(r.code).To(BeZero(), r.stderr)
	g.Expect(r.stdout).To(MatchRegexp(`(?m)^NAME +NAMESPACE +READY +SYNCED +STATUS +AGE +MESSAGE$`))
	g.Expect(r.stdout).To(MatchRegexp(`(?m)^│  ├─ Provider\.aws\.terraplane\.io/photos-minio +` + adminNS + ` +True +- +Available +\S+ +-$`))
	g.Expect(r.stdout).To(ContainSubstring("approve it with: terraplane approve S3Bucket/" + mg + " -n " + adminNS))
	r = terraplane(t, admin, "trace", "bucket/photos", "-n", ns, "-o", "dot")
	g.Expect(r.code).To(BeZero(), r.stderr)
	g.Expect(r.stdout).To(HavePrefix("digraph trace {"))
	g.Expect(strings.Count(r.stdout, " -> ")).To(Equal(9), r.stdout)

	By(t, "the managed resource alone, without -n: managed kinds are looked for in the admin namespace")
	g.Expect(traced(t, admin, "s3bucket/"+mg)[0]).To(Equal("S3Bucket/" + adminNS + "/" + mg + " AwaitingApproval"))

	By(t, "a claimer, -n from the context: what lies in the admin namespace is forbidden, the rest is shown")
	alice := userEnv(t, "KUBECONFIG="+kubeconfigAs(t, "alice", ns))
	g.Expect(traced(t, alice, "bucket/photos")).To(Equal([]string{
		"Bucket/" + ns + "/photos Available",
		"  BucketClass/" + ns + "/photos-standard ",
		"    S3BucketClass/" + adminNS + "/photos-s3 Forbidden",
		"  S3Bucket/" + adminNS + "/" + mg + " Forbidden",
		"  Secret/" + ns + "/photos-bucket ",
	}))
	r = terraplane(t, alice, "trace", "bucket/photos")
	g.Expect(r.code).To(BeZero(), r.stderr)
	g.Expect(r.stderr).To(Equal("note: your rights do not let you read " + adminNS + "/S3BucketClass/photos-s3, " + adminNS + "/S3Bucket/" + mg + "; what lies below them is not shown\n"))
	r = terraplane(t, alice, "trace", "s3bucket/"+mg)
	assertOneLineError(t, r, 1, "forbidden")
}

// TestTraceDefinedClaim traces a claim of a kind a ClaimDefinition made, by its short
// name and by kind.group, as an admin and as a claimer.
func TestTraceDefinedClaim(t *testing.T) {
	g := NewWithT(t)
	const ns = "cli-trace-defined"
	m := definedClaim(t, ns, "core")
	if _, err := env.Tenant(context.Background(), "bob", ns); err != nil {
		t.Fatal(err)
	}
	admin := userEnv(t, "KUBECONFIG="+env.ControlPlane.Kubeconfig)
	g.Expect(traced(t, admin, "cnet/core", "-n", ns)).To(Equal([]string{
		"Network/" + ns + "/core Creating",
		"  NetworkOffer/" + ns + "/core-small ",
		"    ModuleClass/" + adminNS + "/core-network ",
		"  Module/" + adminNS + "/" + m + " Creating",
		"    ProviderConfig/" + adminNS + "/core-random ",
		"      Secret/" + adminNS + "/core-token NotFound",
	}))
	bob := userEnv(t, "KUBECONFIG="+kubeconfigAs(t, "bob", ns))
	g.Expect(traced(t, bob, "Network.cli.example.org/core")).To(Equal([]string{
		"Network/" + ns + "/core Creating",
		"  NetworkOffer/" + ns + "/core-small ",
		"    ModuleClass/" + adminNS + "/core-network Forbidden",
		"  Module/" + adminNS + "/" + m + " Forbidden",
	}), "the claimer may not read ClaimDefinitions: discovery names the class kind")
}

// TestTraceApplication traces a KubernetesApplication placed on a ProviderConfig in the
// admin namespace, as an admin and as its team.
func TestTraceApplication(t *testing.T) {
	g := NewWithT(t)
	const ns = "cli-trace-app"
	application(t, ns, "web")
	if _, err := env.Tenant(context.Background(), "carol", ns); err != nil {
		t.Fatal(err)
	}
	admin := userEnv(t, "KUBECONFIG="+env.ControlPlane.Kubeconfig)
	g.Expect(traced(t, admin, "kubernetesapplication/web", "-n", ns)).To(Equal([]string{
		"KubernetesApplication/" + ns + "/web Pending",
		"  ProviderConfig/" + adminNS + "/web-target Available",
		"    Secret/" + adminNS + "/web-kubeconfig ",
		"  KubernetesApplicationResource/" + ns + "/web-config SecretNotFound",
		"    Secret/" + ns + "/web-db NotFound",
	}))
	carol := userEnv(t, "KUBECONFIG="+kubeconfigAs(t, "carol", ns))
	g.Expect(traced(t, carol, "KubernetesApplication", "web")).To(Equal([]string{
		"KubernetesApplication/" + ns + "/web Pending",
		"  ProviderConfig/" + adminNS + "/web-target Forbidden",
		"  KubernetesApplicationResource/" + ns + "/web-config SecretNotFound",
		"    Secret/" + ns + "/web-db NotFound",
	}))
}
