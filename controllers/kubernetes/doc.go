// Package kubernetes serves the Kubernetes-native managed kinds of group
// kubernetes.terraplane.io. Object and Cluster are Connectors of the one managed
// reconciler (controllers/managed): an Object manages a Kubernetes object in
// a target cluster as an external resource with connection details read from it, a
// Cluster hands on the credentials of an existing cluster. The ProviderConfig controller
// reports whether a ProviderConfig's cluster answers. Targets
// resolves a cluster reference (a KubernetesCluster claim or a ProviderConfig) into a
// client, and Apply and DeleteRemote are the one way any controller writes to a target
// cluster, guarded by the owner annotation; controllers/workload builds on them.
package kubernetes
