// Package scheduler places each unscheduled KubernetesApplication on one cluster: the
// ProviderConfig it names directly, or one Bound, Ready KubernetesCluster claim its
// clusterSelector matches — the one running the fewest applications, ties broken by
// name. With no candidate the application gets Scheduled=False (Unschedulable) with the
// reason, and is looked at again when clusters change.
package scheduler
