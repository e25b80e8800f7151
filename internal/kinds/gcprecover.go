package kinds

import (
	"crypto/sha1" // the module names the service account after the bucket's SHA-1
	"encoding/hex"
	"fmt"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	gcpcachev1 "terraplane.io/terraplane/apis/gcp/cache/v1alpha1"
	gcpcomputev1 "terraplane.io/terraplane/apis/gcp/compute/v1alpha1"
	gcpdbv1 "terraplane.io/terraplane/apis/gcp/database/v1alpha1"
	gcpstoragev1 "terraplane.io/terraplane/apis/gcp/storage/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// The import IDs below take the forms the hashicorp/google provider's import
// documentation gives. Each needs the Provider's project (and some its region), which
// resolveGCPProvider hands the module as the inputs project and region.

// gcpInput is a string input the Provider contributed, empty if there is none.
func gcpInput(pc *registry.ProviderConfig, key string) string {
	if pc == nil {
		return ""
	}
	s, _ := pc.Inputs[key].(string)
	return s
}

// recoverCloudSQLInstance adopts an instance whose create was interrupted, its database
// and its user by their names; the password is generated again and set on the user by
// the next apply. An instance without a name (Terraform picks one) has no fixed identity.
func recoverCloudSQLInstance(mg resource.Managed, pc *registry.ProviderConfig) ([]common.ImportInstruction, bool) {
	db, ok := mg.(*gcpdbv1.CloudSQLInstance)
	project := gcpInput(pc, "project")
	if !ok || db.Spec.ForProvider.InstanceName == "" || project == "" {
		return nil, false
	}
	p := db.Spec.ForProvider
	instance := "projects/" + project + "/instances/" + p.InstanceName
	user := project + "/" + p.InstanceName + "/" + orDefault(p.Username, "app") // PostgreSQL: no host
	if orDefault(p.Engine, "POSTGRES") == "MYSQL" {
		user = project + "/" + p.InstanceName + "/%/" + orDefault(p.Username, "app") // the host Cloud SQL gives a user without one
	}
	return []common.ImportInstruction{
		{Address: "google_sql_database_instance.this", ID: instance},
		{Address: "google_sql_database.this", ID: instance + "/databases/" + orDefault(p.DatabaseName, "app")},
		{Address: "google_sql_user.this", ID: user},
	}, true
}

// recoverCloudStorageBucket adopts a bucket whose create was interrupted by its name,
// and its service account by the name the module derives from the bucket's. The IAM
// members are set again (setting one that exists changes nothing). An HMAC key has an
// ID only Google picks, so a new one is made; one the interrupted create may have made
// was never handed out, reaches only this bucket, and is unusable once the service
// account is deleted with the resource.
func recoverCloudStorageBucket(mg resource.Managed, pc *registry.ProviderConfig) ([]common.ImportInstruction, bool) {
	b, ok := mg.(*gcpstoragev1.CloudStorageBucket)
	project := gcpInput(pc, "project")
	if !ok || b.Spec.ForProvider.BucketName == "" || project == "" {
		return nil, false
	}
	name := b.Spec.ForProvider.BucketName
	imports := []common.ImportInstruction{{Address: "google_storage_bucket.this", ID: name}}
	if b.Spec.ForProvider.CreateAccessKey {
		sum := sha1.Sum([]byte(name))
		email := fmt.Sprintf("bkt-%s@%s.iam.gserviceaccount.com", hex.EncodeToString(sum[:])[:20], project)
		imports = append(imports, common.ImportInstruction{Address: "google_service_account.this[0]", ID: "projects/" + project + "/serviceAccounts/" + email})
	}
	return imports, true
}

// recoverRedisInstance adopts a Memorystore instance whose create was interrupted by
// its name, in the Provider's region (the module's region).
func recoverRedisInstance(mg resource.Managed, pc *registry.ProviderConfig) ([]common.ImportInstruction, bool) {
	r, ok := mg.(*gcpcachev1.RedisInstance)
	project, region := gcpInput(pc, "project"), gcpInput(pc, "region")
	if !ok || r.Spec.ForProvider.InstanceName == "" || project == "" || region == "" {
		return nil, false
	}
	id := fmt.Sprintf("projects/%s/locations/%s/instances/%s", project, region, r.Spec.ForProvider.InstanceName)
	return []common.ImportInstruction{{Address: "google_redis_instance.this", ID: id}}, true
}

// recoverGKECluster adopts a cluster whose create was interrupted and its node pool
// ("default") by their names, at its location (the Provider's region when unset).
func recoverGKECluster(mg resource.Managed, pc *registry.ProviderConfig) ([]common.ImportInstruction, bool) {
	k, ok := mg.(*gcpcomputev1.GKECluster)
	project, location := gcpInput(pc, "project"), ""
	if ok {
		location = orDefault(k.Spec.ForProvider.Location, gcpInput(pc, "region"))
	}
	if !ok || k.Spec.ForProvider.ClusterName == "" || project == "" || location == "" {
		return nil, false
	}
	name := k.Spec.ForProvider.ClusterName
	return []common.ImportInstruction{
		{Address: "google_container_cluster.this", ID: fmt.Sprintf("projects/%s/locations/%s/clusters/%s", project, location, name)},
		{Address: "google_container_node_pool.this", ID: fmt.Sprintf("%s/%s/%s/default", project, location, name)},
	}, true
}
