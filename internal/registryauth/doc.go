// Package registryauth turns Kubernetes pull secrets (kubernetes.io/dockerconfigjson and
// kubernetes.io/dockercfg) into registry credentials with go-containerregistry's
// authn/kubernetes keychain. The stack manager and OCI module sources share it.
package registryauth
