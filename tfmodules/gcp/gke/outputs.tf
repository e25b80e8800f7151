locals {
  endpoint = "https://${google_container_cluster.this.endpoint}"
  context  = "gke_${var.project}_${local.location}_${var.cluster_name}"
}

output "endpoint" {
  description = "URL of the cluster's API server."
  value       = local.endpoint
}

output "cluster_ca" {
  description = "PEM certificate of the cluster's CA."
  value       = base64decode(google_container_cluster.this.master_auth[0].cluster_ca_certificate)
  sensitive   = true
}

output "kubeconfig" {
  description = "A kubeconfig that authenticates with gke-gcloud-auth-plugin (the caller's Google identity); it holds no credential."
  sensitive   = true
  value = yamlencode({
    apiVersion        = "v1"
    kind              = "Config"
    "current-context" = local.context
    clusters = [{
      name    = local.context
      cluster = { server = local.endpoint, "certificate-authority-data" = google_container_cluster.this.master_auth[0].cluster_ca_certificate }
    }]
    contexts = [{ name = local.context, context = { cluster = local.context, user = local.context } }]
    users = [{
      name = local.context
      user = {
        exec = {
          apiVersion         = "client.authentication.k8s.io/v1beta1"
          command            = "gke-gcloud-auth-plugin"
          provideClusterInfo = true
          installHint        = "Install gke-gcloud-auth-plugin (gcloud components install gke-gcloud-auth-plugin)."
        }
      }
    }]
  })
}

output "cluster_name" {
  description = "Name of the cluster."
  value       = google_container_cluster.this.name
}

output "location" {
  description = "Region or zone of the cluster."
  value       = google_container_cluster.this.location
}
