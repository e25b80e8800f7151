package kinds

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	awscachev1 "terraplane.io/terraplane/apis/aws/cache/v1alpha1"
	awscomputev1 "terraplane.io/terraplane/apis/aws/compute/v1alpha1"
	awsdbv1 "terraplane.io/terraplane/apis/aws/database/v1alpha1"
	awsv1 "terraplane.io/terraplane/apis/aws/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/workspace"
)

// TestAWSRecoverCreate checks what an interrupted create of each AWS kind imports: the
// objects whose names the resource fixes, and nothing where AWS picks the identity.
func TestAWSRecoverCreate(t *testing.T) {
	rds := &awsdbv1.RDSInstance{}
	rds.Spec.ForProvider = awsdbv1.RDSInstanceParameters{Identifier: "orders", Parameters: map[string]string{"max_connections": "200"}}
	single := &awscachev1.ReplicationGroup{}
	single.Spec.ForProvider.ReplicationGroupID = "cache"
	group := single.DeepCopy()
	group.Spec.ForProvider.Nodes = 2
	inSubnets := &awscomputev1.EKSCluster{}
	inSubnets.Spec.ForProvider = awscomputev1.EKSClusterParameters{ClusterName: "k", SubnetIDs: []string{"subnet-a", "subnet-b"}}
	ownVPC := &awscomputev1.EKSCluster{}
	ownVPC.Spec.ForProvider.ClusterName = "k"
	for _, tc := range []struct {
		name    string
		recover func() ([]common.ImportInstruction, bool)
		want    []string
		wantOK  bool
	}{
		{"rds", func() ([]common.ImportInstruction, bool) { return recoverRDSInstance(rds, nil) },
			[]string{"aws_db_instance.this=orders", "aws_db_parameter_group.this[0]=orders"}, true},
		{"single-node cache", func() ([]common.ImportInstruction, bool) { return recoverReplicationGroup(single, nil) },
			[]string{"aws_elasticache_cluster.this[0]=cache"}, true},
		{"replication group", func() ([]common.ImportInstruction, bool) { return recoverReplicationGroup(group, nil) },
			[]string{"aws_elasticache_replication_group.this[0]=cache"}, true},
		{"eks in subnets", func() ([]common.ImportInstruction, bool) { return recoverEKSCluster(inSubnets, nil) },
			[]string{`aws_iam_role.this["cluster"]=k-cluster`, `aws_iam_role.this["node"]=k-node`, "aws_eks_cluster.this=k", "aws_eks_node_group.this=k:default"}, true},
		{"eks with its own vpc", func() ([]common.ImportInstruction, bool) { return recoverEKSCluster(ownVPC, nil) }, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			imports, ok := tc.recover()
			var got []string
			for _, i := range imports {
				got = append(got, i.Address+"="+i.ID)
			}
			if ok != tc.wantOK || !cmp.Equal(got, tc.want) {
				t.Errorf("got %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// TestAWSReplicationGroupPlan plans a highly available, password-protected Redis
// claim's ElastiCache replication group with the real aws provider. The AWS API emulator
// cannot make replication groups (it lacks their member clusters), so this plan, with
// endpoints that answer nothing, is what is tested of them; the single-node cluster runs
// end to end (test/e2e).
func TestAWSReplicationGroupPlan(t *testing.T) {
	if testing.Short() {
		t.Skip("plans with the aws provider (about 10 s)")
	}
	mirror := devenv.PluginMirror()
	if _, err := os.Stat(filepath.Join(mirror, "registry.terraform.io/hashicorp/aws")); err != nil {
		t.Fatalf("the aws provider is not in %s: run make tools", mirror)
	}
	reg := NewRegistry(nil)
	objs := testCloudProviders(t, reg.Scheme())
	for _, o := range objs {
		if p, ok := o.(*awsv1.Provider); ok {
			p.Spec.Endpoints = map[string]awsv1.EndpointURL{"elasticache": "http://127.0.0.1:1", "sts": "http://127.0.0.1:1"}
		}
	}
	c := fake.NewClientBuilder().WithScheme(reg.Scheme()).WithObjects(objs...).Build()
	eng, err := engine.New(context.Background(), engine.Options{WorkDir: t.TempDir(), PluginMirror: mirror, TerraformPath: os.Getenv("TERRAPLANE_TERRAFORM")})
	if err != nil {
		t.Fatal(err)
	}
	plan := planCase(t, reg, c, eng, "replicationgroup")
	for _, want := range []string{"aws_elasticache_replication_group.this[0]", "random_password.auth[0]"} {
		if !slices.ContainsFunc(plan.Changes, func(ch engine.Change) bool { return ch.Address == "module.this."+want }) {
			t.Errorf("the plan does not create %s:\n%s", want, plan.Text)
		}
	}
	text := strings.Join(strings.Fields(plan.Text), " ")
	for _, want := range []string{`num_cache_clusters = 2`, `automatic_failover_enabled = true`, `multi_az_enabled = true`,
		`transit_encryption_enabled = true`, `auth_token = (known after apply)`, `engine_version = "7.1"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan does not show %q:\n%s", want, plan.Text)
		}
	}
	if slices.ContainsFunc(plan.Changes, func(ch engine.Change) bool { return strings.Contains(ch.Address, "aws_elasticache_cluster") }) {
		t.Errorf("a replication group's plan makes a single-node cluster too:\n%s", plan.Text)
	}
}

// planCase renders a cloud case with local state and plans it.
func planCase(t *testing.T, reg *registry.Registry, c client.Client, eng *engine.Engine, name string) *engine.Plan {
	t.Helper()
	i := slices.IndexFunc(cloudCases, func(tc cloudCase) bool { return tc.name == name })
	k, _ := reg.Managed(cloudCases[i].managed)
	mg := provision(t, reg, k, cloudCases[i])
	r, err := workspace.NewRenderer(c, k, "", "")
	if err != nil {
		t.Fatal(err)
	}
	r.LocalState = true
	ws, err := r.Render(context.Background(), mg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	plan, err := eng.Plan(ctx, ws.Workspace, engine.PlanOptions{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return plan
}
