locals {
  # "7.2" → REDIS_7_2, "7" → REDIS_7_0
  version_parts = split(".", var.redis_version)
  redis_version = var.redis_version == "" ? null : "REDIS_${local.version_parts[0]}_${length(local.version_parts) > 1 ? local.version_parts[1] : "0"}"
}

resource "google_redis_instance" "this" {
  name               = var.instance_name
  region             = var.region == "" ? null : var.region
  tier               = var.high_availability ? "STANDARD_HA" : "BASIC"
  memory_size_gb     = var.memory_size_gb
  redis_version      = local.redis_version
  authorized_network = var.authorized_network == "" ? null : var.authorized_network
  auth_enabled       = !var.auth_disabled
  labels             = var.labels

  # STANDARD_HA has one failover replica; with read replicas on, 1 to 5 replicas serve
  # reads (and one of them takes over on failure).
  replica_count      = var.high_availability ? max(var.read_replicas, 1) : null
  read_replicas_mode = var.high_availability ? (var.read_replicas > 0 ? "READ_REPLICAS_ENABLED" : "READ_REPLICAS_DISABLED") : null

  lifecycle {
    precondition {
      condition     = var.read_replicas == 0 || var.high_availability
      error_message = "Read replicas need high_availability (the STANDARD_HA tier)."
    }
  }
}
