// Package managed is the one managed-resource reconciler. Its skeleton — get, shard and
// pause check, deletion, finalizer, connect, observe, apply when needed, publish, finish —
// runs every managed kind through a crossplane-style Connector and External that the kind
// implements: the Terraform engine in controllers/terraform, the native kinds Object and
// Cluster in controllers/kubernetes. It imports neither of them.
package managed
