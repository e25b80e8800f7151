resource "azurerm_resource_group" "this" {
  count    = var.resource_group_name == "" ? 1 : 0
  name     = "${var.cluster_name}-rg"
  location = var.location
  tags     = var.tags
}

locals {
  resource_group_name = var.resource_group_name != "" ? var.resource_group_name : azurerm_resource_group.this[0].name
}

resource "azurerm_kubernetes_cluster" "this" {
  name                = var.cluster_name
  resource_group_name = local.resource_group_name
  location            = var.location
  # DNS prefix: letters, digits and hyphens, at most 54, starting and ending alphanumeric.
  dns_prefix         = trim(substr(replace(lower(var.cluster_name), "_", "-"), 0, 54), "-")
  kubernetes_version = var.kubernetes_version == "" ? null : var.kubernetes_version
  tags               = var.tags

  default_node_pool {
    name       = "default"
    node_count = var.node_count
    vm_size    = var.vm_size

    upgrade_settings {
      max_surge = "10%"
    }
  }

  identity {
    type = "SystemAssigned"
  }
}
