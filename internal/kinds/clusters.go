package kinds

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	cachev1 "terraplane.io/terraplane/apis/cache/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
)

// RedisClusterGVK and KubernetesClusterGVK are the portable cache and cluster claim kinds.
var (
	RedisClusterGVK      = cachev1.GroupVersion.WithKind("RedisCluster")
	KubernetesClusterGVK = computev1.GroupVersion.WithKind("KubernetesCluster")
)

// redisCluster is met by the managed kinds whose Meets name it.
func redisCluster() registry.ClaimKind {
	return registry.ClaimKind{GVK: RedisClusterGVK, ClassGVK: cachev1.GroupVersion.WithKind("RedisClusterClass")}
}

// kubernetesCluster is met by the managed kinds whose Meets name it, and binds statically
// to a Cluster (an existing cluster reached through a kubernetes.terraplane.io ProviderConfig).
func kubernetesCluster() registry.ClaimKind {
	return registry.ClaimKind{
		GVK:           KubernetesClusterGVK,
		ClassGVK:      computev1.GroupVersion.WithKind("KubernetesClusterClass"),
		Configurators: map[schema.GroupVersionKind]registry.Configurator{ClusterGVK: nil}, // static binding only
	}
}
