// Package remote builds and caches clients to target Kubernetes clusters from connection
// Secrets: a kubeconfig, the fields endpoint/clusterCA/clientCert/clientKey/token/
// username/password, or a ServiceAccount token Secret for the control cluster itself.
// A client is rebuilt when its Secret changes, every request has a deadline, and
// network failures are reported as Unreachable so callers can set a condition.
package remote
