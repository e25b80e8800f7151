locals {
  # One node with no failover and no AUTH is a single-node cache cluster; anything else
  # is a replication group (a primary and replicas).
  group  = var.nodes > 1 || var.high_availability || var.auth_token
  port   = 6379
  subnet = var.subnet_group_name == "" ? null : var.subnet_group_name
  groups = length(var.security_group_ids) == 0 ? null : var.security_group_ids
}

resource "random_password" "auth" {
  count   = var.auth_token ? 1 : 0
  length  = 32
  special = false
}

resource "aws_elasticache_cluster" "this" {
  count              = local.group ? 0 : 1
  cluster_id         = var.replication_group_id
  engine             = "redis"
  engine_version     = var.engine_version
  node_type          = var.node_type
  num_cache_nodes    = 1
  port               = local.port
  subnet_group_name  = local.subnet
  security_group_ids = local.groups
  apply_immediately  = true
  tags               = var.tags
}

resource "aws_elasticache_replication_group" "this" {
  count                      = local.group ? 1 : 0
  replication_group_id       = var.replication_group_id
  description                = "Redis for ${var.replication_group_id}"
  engine                     = "redis"
  engine_version             = var.engine_version
  node_type                  = var.node_type
  num_cache_clusters         = var.nodes
  port                       = local.port
  automatic_failover_enabled = var.high_availability
  multi_az_enabled           = var.high_availability
  transit_encryption_enabled = var.auth_token
  auth_token                 = var.auth_token ? random_password.auth[0].result : null
  at_rest_encryption_enabled = true
  subnet_group_name          = local.subnet
  security_group_ids         = local.groups
  apply_immediately          = true
  tags                       = var.tags

  lifecycle {
    precondition {
      condition     = !var.high_availability || var.nodes >= 2
      error_message = "High availability needs at least 2 nodes."
    }
  }
}
