package kinds

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	awscachev1 "terraplane.io/terraplane/apis/aws/cache/v1alpha1"
	awscomputev1 "terraplane.io/terraplane/apis/aws/compute/v1alpha1"
	awsdbv1 "terraplane.io/terraplane/apis/aws/database/v1alpha1"
	cachev1 "terraplane.io/terraplane/apis/cache/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// rdsInstance is an RDS DB instance with one database, meeting PostgreSQLInstance and
// MySQLInstance claims (the engine comes from the claim's kind).
func rdsInstance() registry.ManagedKind {
	return awsCloud.kind(awsdbv1.RDSInstanceGroupVersionKind, awsdbv1.RDSInstanceClassGroupVersionKind, "aws/rds", databaseConnectionKeys, recoverRDSInstance,
		map[schema.GroupVersionKind]registry.Configurator{
			PostgreSQLInstanceGVK: configurator(func(claim *databasev1.PostgreSQLInstance, class *awsdbv1.RDSInstanceClass, db *awsdbv1.RDSInstance) error {
				return fillRDS("postgres", claim.Namespace, claim.Name, string(claim.UID), claim.Spec.DatabaseParameters, class.Name, db)
			}),
			MySQLInstanceGVK: configurator(func(claim *databasev1.MySQLInstance, class *awsdbv1.RDSInstanceClass, db *awsdbv1.RDSInstance) error {
				return fillRDS("mysql", claim.Namespace, claim.Name, string(claim.UID), claim.Spec.DatabaseParameters, class.Name, db)
			}),
		})
}

// fillRDS fixes the engine (refusing a class made for the other one), maps the portable
// fields and derives the names.
func fillRDS(engine, namespace, name, uid string, want databasev1.DatabaseParameters, class string, db *awsdbv1.RDSInstance) error {
	p := &db.Spec.ForProvider
	if p.Engine != "" && p.Engine != engine {
		return resource.UserErrorf("ClassCannotSatisfy", "class %s makes %s instances, not %s; pick another class", class, p.Engine, engine)
	}
	p.Engine = engine
	if err := fillCloudDatabase(engine, class, want, &p.EngineVersion, &p.StorageGB, 20, &p.HighAvailability); err != nil {
		return err
	}
	p.Encryption = p.Encryption || want.Encryption
	if p.Identifier == "" {
		p.Identifier = DNSName(namespace, name, uid, 63)
	}
	if p.DatabaseName == "" {
		p.DatabaseName = Identifier(namespace, name, uid, 63)
	}
	if p.Username == "" {
		p.Username = Identifier(namespace, name, uid, 16)
	}
	return nil
}

// recoverRDSInstance adopts an instance whose create was interrupted by its identifier;
// the password is generated again and set on the instance by the next apply.
func recoverRDSInstance(mg resource.Managed, _ *registry.ProviderConfig) ([]common.ImportInstruction, bool) {
	db, ok := mg.(*awsdbv1.RDSInstance)
	if !ok || db.Spec.ForProvider.Identifier == "" {
		return nil, false
	}
	p := db.Spec.ForProvider
	imports := []common.ImportInstruction{{Address: "aws_db_instance.this", ID: p.Identifier}}
	if len(p.Parameters) > 0 {
		imports = append(imports, common.ImportInstruction{Address: "aws_db_parameter_group.this[0]", ID: p.Identifier})
	}
	return imports, true
}

// replicationGroup is ElastiCache for Redis meeting RedisCluster claims: a single-node
// cache cluster for one node, a replication group with replicas otherwise.
func replicationGroup() registry.ManagedKind {
	return awsCloud.kind(awscachev1.ReplicationGroupGroupVersionKind, awscachev1.ReplicationGroupClassGroupVersionKind, "aws/elasticache",
		map[string]string{"endpoint": "endpoint", "port": "port", "password": "password"}, recoverReplicationGroup,
		map[schema.GroupVersionKind]registry.Configurator{RedisClusterGVK: configurator(
			func(claim *cachev1.RedisCluster, class *awscachev1.ReplicationGroupClass, r *awscachev1.ReplicationGroup) error {
				p, want := &r.Spec.ForProvider, claim.Spec.RedisClusterParameters
				if err := fillVersion("Redis", class.Name, want.EngineVersion, &p.EngineVersion); err != nil {
					return err
				}
				if want.Nodes > 6 {
					return resource.UserErrorf("ClassCannotSatisfy", "class %s makes ElastiCache replication groups, which have at most 6 nodes (a primary and 5 replicas), but the claim asks for %d", class.Name, want.Nodes)
				}
				p.Nodes = max(p.Nodes, want.Nodes)
				p.HighAvailability = p.HighAvailability || want.HighAvailability
				if p.HighAvailability {
					p.Nodes = max(p.Nodes, 2)
				}
				if p.ReplicationGroupID == "" {
					p.ReplicationGroupID = DNSName(claim.Namespace, claim.Name, string(claim.UID), 40)
				}
				return nil
			})})
}

// recoverReplicationGroup adopts a cache whose create was interrupted by its ID, as the
// resource the module makes for its node count.
func recoverReplicationGroup(mg resource.Managed, _ *registry.ProviderConfig) ([]common.ImportInstruction, bool) {
	r, ok := mg.(*awscachev1.ReplicationGroup)
	if !ok || r.Spec.ForProvider.ReplicationGroupID == "" {
		return nil, false
	}
	p := r.Spec.ForProvider
	if p.Nodes > 1 || p.HighAvailability || p.AuthToken {
		return []common.ImportInstruction{{Address: "aws_elasticache_replication_group.this[0]", ID: p.ReplicationGroupID}}, true
	}
	return []common.ImportInstruction{{Address: "aws_elasticache_cluster.this[0]", ID: p.ReplicationGroupID}}, true
}

// eksCluster is an EKS cluster with a managed node group meeting KubernetesCluster
// claims. Its kubeconfig authenticates with the AWS CLI and holds no credential.
func eksCluster() registry.ManagedKind {
	return awsCloud.kind(awscomputev1.EKSClusterGroupVersionKind, awscomputev1.EKSClusterClassGroupVersionKind, "aws/eks",
		map[string]string{"endpoint": "endpoint", "cluster_ca": "clusterCA", "kubeconfig": "kubeconfig"}, recoverEKSCluster,
		map[schema.GroupVersionKind]registry.Configurator{KubernetesClusterGVK: configurator(
			func(claim *computev1.KubernetesCluster, class *awscomputev1.EKSClusterClass, k *awscomputev1.EKSCluster) error {
				p := &k.Spec.ForProvider
				return fillCluster(claim, class.Name, &p.KubernetesVersion, &p.NodeCount, &p.ClusterName, 40)
			})})
}

// recoverEKSCluster adopts a cluster in given subnets whose create was interrupted: its
// roles, cluster and node group have names derived from the cluster's. A VPC the module
// makes has no name AWS knows it by, so there the user decides.
func recoverEKSCluster(mg resource.Managed, _ *registry.ProviderConfig) ([]common.ImportInstruction, bool) {
	k, ok := mg.(*awscomputev1.EKSCluster)
	if !ok || k.Spec.ForProvider.ClusterName == "" || len(k.Spec.ForProvider.SubnetIDs) == 0 {
		return nil, false
	}
	name := k.Spec.ForProvider.ClusterName
	return []common.ImportInstruction{
		{Address: `aws_iam_role.this["cluster"]`, ID: name + "-cluster"},
		{Address: `aws_iam_role.this["node"]`, ID: name + "-node"},
		{Address: "aws_eks_cluster.this", ID: name},
		{Address: "aws_eks_node_group.this", ID: name + ":default"},
	}, true
}
