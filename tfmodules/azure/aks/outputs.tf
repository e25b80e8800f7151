output "endpoint" {
  description = "URL of the cluster's API server."
  value       = "https://${azurerm_kubernetes_cluster.this.fqdn}:443"
}

output "cluster_ca" {
  description = "PEM certificate of the cluster's CA."
  value       = base64decode(azurerm_kubernetes_cluster.this.kube_config[0].cluster_ca_certificate)
  sensitive   = true
}

output "client_cert" {
  description = "PEM client certificate of the cluster user."
  value       = base64decode(azurerm_kubernetes_cluster.this.kube_config[0].client_certificate)
  sensitive   = true
}

output "client_key" {
  description = "PEM private key of the cluster user."
  value       = base64decode(azurerm_kubernetes_cluster.this.kube_config[0].client_key)
  sensitive   = true
}

output "kubeconfig" {
  description = "The cluster user's kubeconfig, with its client certificate."
  value       = azurerm_kubernetes_cluster.this.kube_config_raw
  sensitive   = true
}

output "resource_group_name" {
  description = "Resource group of the cluster."
  value       = local.resource_group_name
}
