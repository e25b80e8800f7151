resource "azurerm_resource_group" "this" {
  count    = var.resource_group_name == "" ? 1 : 0
  name     = "${var.cache_name}-rg"
  location = var.location
  tags     = var.tags
}

locals {
  resource_group_name = var.resource_group_name != "" ? var.resource_group_name : azurerm_resource_group.this[0].name
}

locals {
  premium = var.sku_name == "Premium"
}

resource "azurerm_redis_cache" "this" {
  name                 = var.cache_name
  resource_group_name  = local.resource_group_name
  location             = var.location
  sku_name             = var.sku_name
  family               = local.premium ? "P" : "C"
  capacity             = local.premium ? max(var.capacity, 1) : var.capacity
  redis_version        = var.redis_version
  non_ssl_port_enabled = false
  minimum_tls_version  = "1.2"
  replicas_per_primary = local.premium && var.replicas_per_primary > 0 ? var.replicas_per_primary : null
  tags                 = var.tags

  lifecycle {
    precondition {
      condition     = var.replicas_per_primary == 0 || local.premium
      error_message = "replicas_per_primary needs the Premium sku_name."
    }
  }
}
