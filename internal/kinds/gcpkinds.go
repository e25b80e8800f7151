package kinds

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	cachev1 "terraplane.io/terraplane/apis/cache/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	gcpcachev1 "terraplane.io/terraplane/apis/gcp/cache/v1alpha1"
	gcpcomputev1 "terraplane.io/terraplane/apis/gcp/compute/v1alpha1"
	gcpdbv1 "terraplane.io/terraplane/apis/gcp/database/v1alpha1"
	gcpstoragev1 "terraplane.io/terraplane/apis/gcp/storage/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// cloudSQLInstance is a Cloud SQL instance with one database and its owner, meeting
// PostgreSQLInstance and MySQLInstance claims (the engine comes from the claim's kind).
func cloudSQLInstance() registry.ManagedKind {
	return gcpCloud.kind(gcpdbv1.CloudSQLInstanceGroupVersionKind, gcpdbv1.CloudSQLInstanceClassGroupVersionKind, "gcp/cloudsql", databaseConnectionKeys, recoverCloudSQLInstance,
		map[schema.GroupVersionKind]registry.Configurator{
			PostgreSQLInstanceGVK: configurator(func(claim *databasev1.PostgreSQLInstance, class *gcpdbv1.CloudSQLInstanceClass, db *gcpdbv1.CloudSQLInstance) error {
				return fillCloudSQL("POSTGRES", claim, claim.Spec.DatabaseParameters, class.Name, db)
			}),
			MySQLInstanceGVK: configurator(func(claim *databasev1.MySQLInstance, class *gcpdbv1.CloudSQLInstanceClass, db *gcpdbv1.CloudSQLInstance) error {
				return fillCloudSQL("MYSQL", claim, claim.Spec.DatabaseParameters, class.Name, db)
			}),
		})
}

// fillCloudSQL fixes the engine (refusing a class made for the other one), maps the
// portable fields and derives the names.
func fillCloudSQL(engine string, claim metav1.Object, want databasev1.DatabaseParameters, class string, db *gcpdbv1.CloudSQLInstance) error {
	p := &db.Spec.ForProvider
	if p.Engine != "" && p.Engine != engine {
		return resource.UserErrorf("ClassCannotSatisfy", "class %s makes %s instances, not %s; pick another class", class, p.Engine, engine)
	}
	p.Engine = engine
	if err := fillCloudDatabase(engine, class, want, &p.EngineVersion, &p.DiskSizeGB, 10, &p.HighAvailability); err != nil {
		return err
	}
	p.EngineVersion = cloudSQLVersion(engine, p.EngineVersion)
	ns, name, uid := claim.GetNamespace(), claim.GetName(), string(claim.GetUID())
	if p.InstanceName == "" {
		p.InstanceName = DNSName(ns, name, uid, 80)
	}
	if p.DatabaseName == "" {
		p.DatabaseName = Identifier(ns, name, uid, 63)
	}
	if p.Username == "" {
		p.Username = Identifier(ns, name, uid, 31)
	}
	return nil
}

// cloudSQLVersion is a version as Cloud SQL names it: PostgreSQL by major version
// (POSTGRES_16), MySQL by major.minor (MYSQL_8_0).
func cloudSQLVersion(engine, v string) string {
	if v == "" {
		return v
	}
	major, minor, _ := strings.Cut(v, ".")
	switch {
	case engine == "POSTGRES":
		return major
	case minor == "" && major == "8":
		return "8.0"
	case minor == "" && major == "5":
		return "5.7"
	}
	return v
}

// cloudStorageBucket is a Cloud Storage bucket meeting Bucket claims; with
// createAccessKey its Secret carries the HMAC key of a service account limited to it.
func cloudStorageBucket() registry.ManagedKind {
	return gcpCloud.kind(gcpstoragev1.CloudStorageBucketGroupVersionKind, gcpstoragev1.CloudStorageBucketClassGroupVersionKind, "gcp/storagebucket",
		map[string]string{
			"endpoint": "endpoint", "bucket": "bucket", "region": "region",
			"access_key_id": "accessKeyID", "secret_access_key": "secretAccessKey",
		}, recoverCloudStorageBucket,
		map[schema.GroupVersionKind]registry.Configurator{BucketGVK: configurator(
			func(claim *storagev1.Bucket, _ *gcpstoragev1.CloudStorageBucketClass, b *gcpstoragev1.CloudStorageBucket) error {
				p := &b.Spec.ForProvider
				if p.BucketName == "" {
					p.BucketName = BucketName(claim.Namespace, claim.Name, string(claim.UID))
				}
				p.Versioning = p.Versioning || claim.Spec.Versioning
				p.Labels = gcpLabels(p.Labels, claim.Spec.Tags)
				return nil
			})})
}

// gcpRedisInstance is a Memorystore for Redis instance meeting RedisCluster claims: a
// primary, with highAvailability a failover replica, and with more nodes read replicas.
func gcpRedisInstance() registry.ManagedKind {
	return gcpCloud.kind(gcpcachev1.RedisInstanceGroupVersionKind, gcpcachev1.RedisInstanceClassGroupVersionKind, "gcp/redis",
		map[string]string{"endpoint": "endpoint", "port": "port", "password": "password"}, recoverRedisInstance,
		map[schema.GroupVersionKind]registry.Configurator{RedisClusterGVK: configurator(
			func(claim *cachev1.RedisCluster, class *gcpcachev1.RedisInstanceClass, r *gcpcachev1.RedisInstance) error {
				p, want := &r.Spec.ForProvider, claim.Spec.RedisClusterParameters
				if err := fillVersion("Redis", class.Name, want.EngineVersion, &p.RedisVersion); err != nil {
					return err
				}
				if want.Nodes > 6 {
					return resource.UserErrorf("ClassCannotSatisfy", "class %s makes Memorystore for Redis instances, which have at most 6 nodes (a primary and 5 replicas), but the claim asks for %d", class.Name, want.Nodes)
				}
				p.HighAvailability = p.HighAvailability || want.HighAvailability || want.Nodes > 1
				if want.Nodes > 2 {
					p.ReadReplicas = max(p.ReadReplicas, want.Nodes-1)
				}
				if p.InstanceName == "" {
					p.InstanceName = DNSName(claim.Namespace, claim.Name, string(claim.UID), 40)
				}
				return nil
			})})
}

// gkeCluster is a GKE cluster with one node pool meeting KubernetesCluster claims. Its
// kubeconfig authenticates with gke-gcloud-auth-plugin and holds no credential.
func gkeCluster() registry.ManagedKind {
	return gcpCloud.kind(gcpcomputev1.GKEClusterGroupVersionKind, gcpcomputev1.GKEClusterClassGroupVersionKind, "gcp/gke",
		map[string]string{"endpoint": "endpoint", "cluster_ca": "clusterCA", "kubeconfig": "kubeconfig"}, recoverGKECluster,
		map[schema.GroupVersionKind]registry.Configurator{KubernetesClusterGVK: configurator(
			func(claim *computev1.KubernetesCluster, class *gcpcomputev1.GKEClusterClass, k *gcpcomputev1.GKECluster) error {
				p := &k.Spec.ForProvider
				return fillCluster(claim, class.Name, &p.KubernetesVersion, &p.NodeCount, &p.ClusterName, 40)
			})})
}
