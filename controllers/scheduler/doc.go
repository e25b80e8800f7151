// Package scheduler places each unscheduled KubernetesApplication on one cluster whose
// credentials work: the ProviderConfig it names directly (once that ProviderConfig is
// Ready: its cluster answered), or one Bound, Ready KubernetesCluster claim its
// clusterSelector matches — the one running the fewest applications, ties broken by
// name. A member of an autoscaled ResourcePool takes at most the pool's
// applicationsPerCluster. With no candidate the application gets Scheduled=False
// (Unschedulable) with the reason and the autoscaled pools that grow for it, and is
// looked at again when clusters change. An application whose cluster
// turns unusable before any of its resources was submitted there is placed again; one
// that submitted something stays, so nothing is left behind in the old cluster.
// FirstConsumers places the claims that bind on first consumer on the cluster of the
// first application scheduled that uses their connection Secret.
package scheduler
