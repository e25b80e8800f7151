resource "azurerm_resource_group" "this" {
  count    = var.resource_group_name == "" ? 1 : 0
  name     = "${var.server_name}-rg"
  location = var.location
  tags     = var.tags
}

locals {
  resource_group_name = var.resource_group_name != "" ? var.resource_group_name : azurerm_resource_group.this[0].name
}

resource "random_password" "this" {
  length      = 32
  special     = false
  min_upper   = 1
  min_lower   = 1
  min_numeric = 1
}

resource "azurerm_mysql_flexible_server" "this" {
  name                   = var.server_name
  resource_group_name    = local.resource_group_name
  location               = var.location
  version                = var.engine_version == "8.0" ? "8.0.21" : var.engine_version
  sku_name               = var.sku_name
  administrator_login    = var.administrator_login
  administrator_password = random_password.this.result
  delegated_subnet_id    = var.delegated_subnet_id == "" ? null : var.delegated_subnet_id
  private_dns_zone_id    = var.private_dns_zone_id == "" ? null : var.private_dns_zone_id
  tags                   = var.tags

  storage {
    size_gb           = var.storage_gb
    auto_grow_enabled = true
  }

  dynamic "high_availability" {
    for_each = var.high_availability ? [1] : []
    content {
      mode = "ZoneRedundant"
    }
  }

  lifecycle {
    # Azure picks the zones when none is given; a later plan must not move them back.
    ignore_changes = [zone, high_availability[0].standby_availability_zone]
    precondition {
      condition     = !(var.high_availability && substr(var.sku_name, 0, 2) == "B_")
      error_message = "Burstable sizes (B_...) have no high availability; pick a GP_ or MO_ sku_name."
    }
  }
}

resource "azurerm_mysql_flexible_database" "this" {
  name                = var.database_name
  resource_group_name = local.resource_group_name
  server_name         = azurerm_mysql_flexible_server.this.name
  charset             = "utf8mb4"
  collation           = "utf8mb4_unicode_ci"

  lifecycle {
    # It names its server by name, which a new server (in another location, say) keeps:
    # the database goes with the server it lived on.
    replace_triggered_by = [azurerm_mysql_flexible_server.this.id]
  }
}
