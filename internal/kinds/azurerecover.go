package kinds

import (
	azurecachev1 "terraplane.io/terraplane/apis/azure/cache/v1alpha1"
	azurecomputev1 "terraplane.io/terraplane/apis/azure/compute/v1alpha1"
	azuredbv1 "terraplane.io/terraplane/apis/azure/database/v1alpha1"
	azurestoragev1 "terraplane.io/terraplane/apis/azure/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// The azurerm provider imports by full ARM resource IDs. They name the Provider's
// subscription, which resolveAzureProvider sets on the azurerm provider block, and the
// resource group: the one forProvider names, or the module's own, named after the
// resource with "-rg" appended. A random_password cannot be imported: the next apply
// generates it again and sets it on the server.

// azureSubscription is the subscription the Provider's azurerm block names, empty if none.
func azureSubscription(pc *registry.ProviderConfig) string {
	if pc == nil {
		return ""
	}
	for _, p := range pc.Providers {
		if p.Name == "azurerm" {
			s, _ := p.Config["subscription_id"].(string)
			return s
		}
	}
	return ""
}

// azureGroup is the ARM ID of the resource group a resource named name is in, and the
// import of that group when the module makes it (no group given).
func azureGroup(subscription, group, name string) (string, []common.ImportInstruction) {
	if group != "" {
		return "/subscriptions/" + subscription + "/resourceGroups/" + group, nil
	}
	id := "/subscriptions/" + subscription + "/resourceGroups/" + name + "-rg"
	return id, []common.ImportInstruction{{Address: "azurerm_resource_group.this[0]", ID: id}}
}

// azureRecovery imports the resource group (if the module makes it) and the resource at
// address, of ARM type armType ("Microsoft.Cache/redis"), named name, and then the
// children (address → path under the resource's ID). Without a subscription or a name
// the identity is not fixed.
func azureRecovery(pc *registry.ProviderConfig, group, name, address, armType string, children ...[2]string) ([]common.ImportInstruction, bool) {
	sub := azureSubscription(pc)
	if sub == "" || name == "" {
		return nil, false
	}
	groupID, imports := azureGroup(sub, group, name)
	id := groupID + "/providers/" + armType + "/" + name
	imports = append(imports, common.ImportInstruction{Address: address, ID: id})
	for _, c := range children {
		imports = append(imports, common.ImportInstruction{Address: c[0], ID: id + "/" + c[1]})
	}
	return imports, true
}

// recoverPostgreSQLFlexibleServer adopts a server whose create was interrupted, its
// resource group and its database.
func recoverPostgreSQLFlexibleServer(mg resource.Managed, pc *registry.ProviderConfig) ([]common.ImportInstruction, bool) {
	s, ok := mg.(*azuredbv1.PostgreSQLFlexibleServer)
	if !ok {
		return nil, false
	}
	p := s.Spec.ForProvider
	return azureRecovery(pc, p.ResourceGroupName, p.ServerName, "azurerm_postgresql_flexible_server.this", "Microsoft.DBforPostgreSQL/flexibleServers",
		[2]string{"azurerm_postgresql_flexible_server_database.this", "databases/" + orDefault(p.DatabaseName, "app")})
}

// recoverMySQLFlexibleServer adopts a server whose create was interrupted, its resource
// group and its database.
func recoverMySQLFlexibleServer(mg resource.Managed, pc *registry.ProviderConfig) ([]common.ImportInstruction, bool) {
	s, ok := mg.(*azuredbv1.MySQLFlexibleServer)
	if !ok {
		return nil, false
	}
	p := s.Spec.ForProvider
	return azureRecovery(pc, p.ResourceGroupName, p.ServerName, "azurerm_mysql_flexible_server.this", "Microsoft.DBforMySQL/flexibleServers",
		[2]string{"azurerm_mysql_flexible_database.this", "databases/" + orDefault(p.DatabaseName, "app")})
}

// recoverStorageAccount adopts an account whose create was interrupted, its resource
// group and its blob container (by its resource manager ID, as the module gives the
// container storage_account_id).
func recoverStorageAccount(mg resource.Managed, pc *registry.ProviderConfig) ([]common.ImportInstruction, bool) {
	a, ok := mg.(*azurestoragev1.StorageAccount)
	if !ok {
		return nil, false
	}
	p := a.Spec.ForProvider
	return azureRecovery(pc, p.ResourceGroupName, p.AccountName, "azurerm_storage_account.this", "Microsoft.Storage/storageAccounts",
		[2]string{"azurerm_storage_container.this", "blobServices/default/containers/" + orDefault(p.ContainerName, "data")})
}

// recoverRedisCache adopts a cache whose create was interrupted and its resource group.
func recoverRedisCache(mg resource.Managed, pc *registry.ProviderConfig) ([]common.ImportInstruction, bool) {
	r, ok := mg.(*azurecachev1.RedisCache)
	if !ok {
		return nil, false
	}
	return azureRecovery(pc, r.Spec.ForProvider.ResourceGroupName, r.Spec.ForProvider.CacheName, "azurerm_redis_cache.this", "Microsoft.Cache/redis")
}

// recoverAKSCluster adopts a cluster whose create was interrupted (its default node
// pool is part of it) and its resource group.
func recoverAKSCluster(mg resource.Managed, pc *registry.ProviderConfig) ([]common.ImportInstruction, bool) {
	k, ok := mg.(*azurecomputev1.AKSCluster)
	if !ok {
		return nil, false
	}
	return azureRecovery(pc, k.Spec.ForProvider.ResourceGroupName, k.Spec.ForProvider.ClusterName, "azurerm_kubernetes_cluster.this", "Microsoft.ContainerService/managedClusters")
}
