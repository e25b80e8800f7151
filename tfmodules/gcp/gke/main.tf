locals {
  location = var.location != "" ? var.location : var.region
}

resource "google_container_cluster" "this" {
  name                = var.cluster_name
  location            = local.location
  min_master_version  = var.kubernetes_version == "" ? null : var.kubernetes_version
  network             = var.network == "" ? null : var.network
  subnetwork          = var.subnetwork == "" ? null : var.subnetwork
  deletion_protection = var.deletion_protection
  resource_labels     = var.labels

  # The node pool below is managed on its own, so that changing it never replaces the cluster.
  remove_default_node_pool = true
  initial_node_count       = 1

  release_channel {
    channel = var.release_channel
  }

  lifecycle {
    precondition {
      condition     = local.location != ""
      error_message = "Set location, or region (the Provider's region)."
    }
  }
}

resource "google_container_node_pool" "this" {
  name       = "default"
  cluster    = google_container_cluster.this.id
  location   = local.location
  node_count = var.node_count

  node_config {
    machine_type    = var.machine_type
    oauth_scopes    = ["https://www.googleapis.com/auth/cloud-platform"]
    resource_labels = var.labels
  }

  management {
    auto_repair  = true
    auto_upgrade = true
  }
}
