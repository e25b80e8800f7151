package kinds

import (
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	azurecachev1 "terraplane.io/terraplane/apis/azure/cache/v1alpha1"
	azurecomputev1 "terraplane.io/terraplane/apis/azure/compute/v1alpha1"
	azuredbv1 "terraplane.io/terraplane/apis/azure/database/v1alpha1"
	azurestoragev1 "terraplane.io/terraplane/apis/azure/storage/v1alpha1"
	cachev1 "terraplane.io/terraplane/apis/cache/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// postgreSQLFlexibleServer is an Azure Database for PostgreSQL flexible server with one
// database, meeting PostgreSQLInstance claims.
func postgreSQLFlexibleServer() registry.ManagedKind {
	return azureCloud.kind(azuredbv1.PostgreSQLFlexibleServerGroupVersionKind, azuredbv1.PostgreSQLFlexibleServerClassGroupVersionKind, "azure/postgresqlflexible", databaseConnectionKeys, recoverPostgreSQLFlexibleServer,
		map[schema.GroupVersionKind]registry.Configurator{PostgreSQLInstanceGVK: configurator(
			func(claim *databasev1.PostgreSQLInstance, class *azuredbv1.PostgreSQLFlexibleServerClass, s *azuredbv1.PostgreSQLFlexibleServer) error {
				p := &s.Spec.ForProvider
				if err := fillCloudDatabase("PostgreSQL", class.Name, claim.Spec.DatabaseParameters, &p.EngineVersion, &p.StorageGB, 32, &p.HighAvailability); err != nil {
					return err
				}
				p.EngineVersion, _, _ = strings.Cut(p.EngineVersion, ".") // Azure names PostgreSQL versions by major
				if err := checkFlexibleSku(class.Name, p.SkuName, p.HighAvailability); err != nil {
					return err
				}
				p.ServerName = orDefault(p.ServerName, DNSName(claim.Namespace, claim.Name, string(claim.UID), 63))
				p.DatabaseName = orDefault(p.DatabaseName, Identifier(claim.Namespace, claim.Name, string(claim.UID), 63))
				return nil
			})})
}

// mySQLFlexibleServer is an Azure Database for MySQL flexible server with one database,
// meeting MySQLInstance claims.
func mySQLFlexibleServer() registry.ManagedKind {
	return azureCloud.kind(azuredbv1.MySQLFlexibleServerGroupVersionKind, azuredbv1.MySQLFlexibleServerClassGroupVersionKind, "azure/mysqlflexible", databaseConnectionKeys, recoverMySQLFlexibleServer,
		map[schema.GroupVersionKind]registry.Configurator{MySQLInstanceGVK: configurator(
			func(claim *databasev1.MySQLInstance, class *azuredbv1.MySQLFlexibleServerClass, s *azuredbv1.MySQLFlexibleServer) error {
				p := &s.Spec.ForProvider
				if err := fillCloudDatabase("MySQL", class.Name, claim.Spec.DatabaseParameters, &p.EngineVersion, &p.StorageGB, 20, &p.HighAvailability); err != nil {
					return err
				}
				if p.EngineVersion == "8" || p.EngineVersion == "8.0" { // Azure's one 8.0 version
					p.EngineVersion = "8.0.21"
				}
				if err := checkFlexibleSku(class.Name, p.SkuName, p.HighAvailability); err != nil {
					return err
				}
				p.ServerName = orDefault(p.ServerName, DNSName(claim.Namespace, claim.Name, string(claim.UID), 63))
				p.DatabaseName = orDefault(p.DatabaseName, Identifier(claim.Namespace, claim.Name, string(claim.UID), 63))
				return nil
			})})
}

// checkFlexibleSku refuses high availability on a Burstable size, which has none.
func checkFlexibleSku(class, sku string, ha bool) error {
	if ha && strings.HasPrefix(orDefault(sku, "B_Standard_B1ms"), "B_") {
		return resource.UserErrorf("ClassCannotSatisfy", "class %s makes Burstable servers (%s), which have no high availability; pick a class with a GP_ or MO_ skuName",
			class, orDefault(sku, "B_Standard_B1ms"))
	}
	return nil
}

// storageAccount is a storage account with one private blob container, meeting Bucket
// claims; with createAccessKey its Secret carries the account's key, which reaches only
// this account.
func storageAccount() registry.ManagedKind {
	return azureCloud.kind(azurestoragev1.StorageAccountGroupVersionKind, azurestoragev1.StorageAccountClassGroupVersionKind, "azure/storageaccount",
		map[string]string{
			"endpoint": "endpoint", "bucket": "bucket", "region": "region",
			"account_name": "accountName", "account_key": "accountKey",
		}, recoverStorageAccount,
		map[schema.GroupVersionKind]registry.Configurator{BucketGVK: configurator(
			func(claim *storagev1.Bucket, _ *azurestoragev1.StorageAccountClass, a *azurestoragev1.StorageAccount) error {
				p := &a.Spec.ForProvider
				p.AccountName = orDefault(p.AccountName, CompactName(claim.Namespace, claim.Name, string(claim.UID), 24))
				p.Versioning = p.Versioning || claim.Spec.Versioning
				p.Tags = mergeTags(p.Tags, claim.Spec.Tags)
				return nil
			})})
}

// redisCache is an Azure Cache for Redis meeting RedisCluster claims: Basic is one node,
// Standard a primary and a replica, Premium a primary and up to 3 replicas.
func redisCache() registry.ManagedKind {
	return azureCloud.kind(azurecachev1.RedisCacheGroupVersionKind, azurecachev1.RedisCacheClassGroupVersionKind, "azure/rediscache",
		map[string]string{"endpoint": "endpoint", "port": "port", "password": "password"}, recoverRedisCache,
		map[schema.GroupVersionKind]registry.Configurator{RedisClusterGVK: configurator(
			func(claim *cachev1.RedisCluster, class *azurecachev1.RedisCacheClass, r *azurecachev1.RedisCache) error {
				p, want := &r.Spec.ForProvider, claim.Spec.RedisClusterParameters
				p.RedisVersion = orDefault(p.RedisVersion, "6")
				if err := fillVersion("Redis", class.Name, want.EngineVersion, &p.RedisVersion); err != nil {
					return err
				}
				switch {
				case want.Nodes > 4:
					return resource.UserErrorf("ClassCannotSatisfy", "class %s makes Azure caches, which have at most 4 nodes (a primary and 3 replicas), but the claim asks for %d", class.Name, want.Nodes)
				case want.Nodes > 2 && p.SkuName != "Premium":
					return resource.UserErrorf("ClassCannotSatisfy", "class %s makes %s caches; %d nodes need skuName Premium; pick another class", class.Name, orDefault(p.SkuName, "Basic"), want.Nodes)
				case want.Nodes > 2:
					p.ReplicasPerPrimary = max(p.ReplicasPerPrimary, want.Nodes-1)
				case (want.HighAvailability || want.Nodes == 2) && orDefault(p.SkuName, "Basic") == "Basic":
					p.SkuName = "Standard" // a primary and a replica
				}
				p.CacheName = orDefault(p.CacheName, DNSName(claim.Namespace, claim.Name, string(claim.UID), 63))
				return nil
			})})
}

// aksCluster is an AKS cluster with one node pool meeting KubernetesCluster claims. Its
// connection Secret carries the cluster user's client certificate and kubeconfig.
func aksCluster() registry.ManagedKind {
	return azureCloud.kind(azurecomputev1.AKSClusterGroupVersionKind, azurecomputev1.AKSClusterClassGroupVersionKind, "azure/aks",
		map[string]string{
			"endpoint": "endpoint", "cluster_ca": "clusterCA", "client_cert": "clientCert",
			"client_key": "clientKey", "kubeconfig": "kubeconfig",
		}, recoverAKSCluster,
		map[schema.GroupVersionKind]registry.Configurator{KubernetesClusterGVK: configurator(
			func(claim *computev1.KubernetesCluster, class *azurecomputev1.AKSClusterClass, k *azurecomputev1.AKSCluster) error {
				p := &k.Spec.ForProvider
				return fillCluster(claim, class.Name, &p.KubernetesVersion, &p.NodeCount, &p.ClusterName, 63)
			})})
}

// mergeTags adds a claim's tags to a class's.
func mergeTags(tags, claim map[string]string) map[string]string {
	if len(claim) == 0 {
		return tags
	}
	if tags == nil {
		tags = map[string]string{}
	}
	maps.Copy(tags, claim)
	return tags
}
