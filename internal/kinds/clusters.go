package kinds

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "terraplane.io/terraplane/apis/cache/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// redisCluster is modelled (claim, portable class, defaulting); no managed kind satisfies
// it until a cloud provider's Redis kind is registered, so claims say which class is missing.
func redisCluster() registry.ClaimKind {
	return registry.ClaimKind{
		GVK:           cachev1.GroupVersion.WithKind("RedisCluster"),
		New:           func() resource.Claim { return &cachev1.RedisCluster{} },
		ClassGVK:      cachev1.GroupVersion.WithKind("RedisClusterClass"),
		NewClass:      func() resource.PortableClass { return &cachev1.RedisClusterClass{} },
		NewClassList:  func() client.ObjectList { return &cachev1.RedisClusterClassList{} },
		Configurators: map[schema.GroupVersionKind]registry.Configurator{},
	}
}

// kubernetesCluster is modelled like redisCluster, and binds statically to a Cluster (an
// existing cluster reached through a kubernetes.terraplane.io ProviderConfig).
func kubernetesCluster() registry.ClaimKind {
	return registry.ClaimKind{
		GVK:           computev1.GroupVersion.WithKind("KubernetesCluster"),
		New:           func() resource.Claim { return &computev1.KubernetesCluster{} },
		ClassGVK:      computev1.GroupVersion.WithKind("KubernetesClusterClass"),
		NewClass:      func() resource.PortableClass { return &computev1.KubernetesClusterClass{} },
		NewClassList:  func() client.ObjectList { return &computev1.KubernetesClusterClassList{} },
		Configurators: map[schema.GroupVersionKind]registry.Configurator{ClusterGVK: nil}, // static binding only
	}
}
