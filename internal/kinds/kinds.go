package kinds

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	awscachev1 "terraplane.io/terraplane/apis/aws/cache/v1alpha1"
	awscomputev1 "terraplane.io/terraplane/apis/aws/compute/v1alpha1"
	awsdbv1 "terraplane.io/terraplane/apis/aws/database/v1alpha1"
	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	awsv1 "terraplane.io/terraplane/apis/aws/v1alpha1"
	azurecachev1 "terraplane.io/terraplane/apis/azure/cache/v1alpha1"
	azurecomputev1 "terraplane.io/terraplane/apis/azure/compute/v1alpha1"
	azuredbv1 "terraplane.io/terraplane/apis/azure/database/v1alpha1"
	azurestoragev1 "terraplane.io/terraplane/apis/azure/storage/v1alpha1"
	azurev1 "terraplane.io/terraplane/apis/azure/v1alpha1"
	cachev1 "terraplane.io/terraplane/apis/cache/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	gcpcachev1 "terraplane.io/terraplane/apis/gcp/cache/v1alpha1"
	gcpcomputev1 "terraplane.io/terraplane/apis/gcp/compute/v1alpha1"
	gcpdbv1 "terraplane.io/terraplane/apis/gcp/database/v1alpha1"
	gcpstoragev1 "terraplane.io/terraplane/apis/gcp/storage/v1alpha1"
	gcpv1 "terraplane.io/terraplane/apis/gcp/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	mysqldbv1 "terraplane.io/terraplane/apis/mysql/database/v1alpha1"
	mysqlv1 "terraplane.io/terraplane/apis/mysql/v1alpha1"
	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
	pgdbv1 "terraplane.io/terraplane/apis/postgresql/database/v1alpha1"
	pgv1 "terraplane.io/terraplane/apis/postgresql/v1alpha1"
	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/registry"
)

// NewScheme returns a scheme with the Kubernetes built-ins and every Terraplane API.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(storagev1.AddToScheme(s))
	utilruntime.Must(awsv1.AddToScheme(s))
	utilruntime.Must(awsstoragev1.AddToScheme(s))
	utilruntime.Must(databasev1.AddToScheme(s))
	utilruntime.Must(cachev1.AddToScheme(s))
	utilruntime.Must(computev1.AddToScheme(s))
	utilruntime.Must(pgv1.AddToScheme(s))
	utilruntime.Must(pgdbv1.AddToScheme(s))
	utilruntime.Must(mysqlv1.AddToScheme(s))
	utilruntime.Must(mysqldbv1.AddToScheme(s))
	utilruntime.Must(terraformv1.AddToScheme(s))
	utilruntime.Must(kubernetesv1.AddToScheme(s))
	utilruntime.Must(workloadv1.AddToScheme(s))
	utilruntime.Must(stacksv1.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(apiextv1.AddToScheme(s))
	utilruntime.Must(policyv1.AddToScheme(s))
	utilruntime.Must(scalingv1.AddToScheme(s))
	for _, add := range []func(*runtime.Scheme) error{ // AWS, GCP and Azure
		awsdbv1.AddToScheme, awscachev1.AddToScheme, awscomputev1.AddToScheme,
		gcpv1.AddToScheme, gcpdbv1.AddToScheme, gcpstoragev1.AddToScheme, gcpcachev1.AddToScheme, gcpcomputev1.AddToScheme,
		azurev1.AddToScheme, azuredbv1.AddToScheme, azurestoragev1.AddToScheme, azurecachev1.AddToScheme, azurecomputev1.AddToScheme,
	} {
		utilruntime.Must(add(s))
	}
	return s
}

// NewRegistry returns a registry with every shipped kind; loader fetches the modules
// that ModuleClasses and Modules name.
func NewRegistry(loader *modsource.Loader) *registry.Registry {
	r := registry.New(NewScheme())
	r.AddManaged(moduleKind(loader))
	r.AddManaged(s3Bucket())
	r.AddManaged(postgresqlDatabase())
	r.AddManaged(mysqlDatabase())
	r.AddManaged(object())
	r.AddManaged(cluster())
	for _, k := range []registry.ManagedKind{ // AWS, GCP and Azure
		rdsInstance(), replicationGroup(), eksCluster(),
		cloudSQLInstance(), cloudStorageBucket(), gcpRedisInstance(), gkeCluster(),
		postgreSQLFlexibleServer(), mySQLFlexibleServer(), storageAccount(), redisCache(), aksCluster(),
	} {
		r.AddManaged(k)
	}
	r.AddClaim(bucket())
	r.AddClaim(postgreSQLInstance())
	r.AddClaim(mySQLInstance())
	r.AddClaim(redisCluster())
	r.AddClaim(kubernetesCluster())
	for _, k := range r.ClaimKinds() {
		k.Configurators[ModuleGVK] = configureModule // any claim can be met by a ModuleClass
		k.Configurators[ObjectGVK] = configureObject // ... or by an ObjectClass
	}
	return r
}
