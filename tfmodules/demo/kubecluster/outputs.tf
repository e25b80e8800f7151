output "endpoint" {
  value       = local.endpoint
  description = "URL of the API server (loopback)."
}

output "data_dir" {
  value       = terraform_data.server.output.dir
  description = "Directory of the cluster's data, logs and process ids (etcd.pid, kube-apiserver.pid)."
}

output "token" {
  value       = random_password.token.result
  sensitive   = true
  description = "Bearer token of the cluster's admin (group system:masters)."
}

# The API server's certificate is self-signed for 127.0.0.1 and made at its start,
# after terraform could read it: the kubeconfig skips its verification. Loopback only.
output "kubeconfig" {
  sensitive   = true
  description = "Kubeconfig of the cluster's admin."
  value = yamlencode({
    apiVersion      = "v1"
    kind            = "Config"
    current-context = var.cluster_name
    clusters        = [{ name = var.cluster_name, cluster = { server = local.endpoint, insecure-skip-tls-verify = true } }]
    users           = [{ name = "admin", user = { token = random_password.token.result } }]
    contexts        = [{ name = var.cluster_name, context = { cluster = var.cluster_name, user = "admin" } }]
  })
}
