// Package provider keeps Providers and ProviderConfigs that are in use from going: one
// usage reconciler per provider kind (every kind a registered managed kind names in
// ProviderGVK) holds each provider with a finalizer, counts and names its users in
// status.users and the InUse condition, and lets a deleted provider go only once no
// managed resource (or, for a kubernetes.terraplane.io ProviderConfig, no application
// resource) names it any more.
package provider
