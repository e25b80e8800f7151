output "endpoint" {
  description = "Host name clients connect to: the primary endpoint of a replication group, the node of a single-node cluster."
  value       = local.group ? aws_elasticache_replication_group.this[0].primary_endpoint_address : try(aws_elasticache_cluster.this[0].cache_nodes[0].address, null)
}

output "port" {
  description = "6379."
  value       = local.port
}

output "password" {
  description = "The generated AUTH password, with auth_token."
  value       = var.auth_token ? random_password.auth[0].result : null
  sensitive   = true
}

output "reader_endpoint" {
  description = "Host name of the replicas (replication groups only)."
  value       = local.group ? aws_elasticache_replication_group.this[0].reader_endpoint_address : null
}
