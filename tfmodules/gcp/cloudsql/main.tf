locals {
  postgres = var.engine == "POSTGRES"
  version  = var.engine_version != "" ? var.engine_version : (local.postgres ? "16" : "8.0")
  port     = local.postgres ? 5432 : 3306
}

resource "random_password" "this" {
  length      = 32
  special     = false
  min_upper   = 1
  min_lower   = 1
  min_numeric = 1
}

resource "google_sql_database_instance" "this" {
  name                = var.instance_name == "" ? null : var.instance_name
  database_version    = "${var.engine}_${replace(local.version, ".", "_")}"
  deletion_protection = var.deletion_protection

  settings {
    tier                        = var.tier
    edition                     = "ENTERPRISE"
    availability_type           = var.high_availability ? "REGIONAL" : "ZONAL"
    disk_size                   = var.disk_size_gb
    disk_autoresize             = true
    deletion_protection_enabled = var.deletion_protection
    user_labels                 = var.labels

    ip_configuration {
      ipv4_enabled    = var.private_network == ""
      private_network = var.private_network == "" ? null : var.private_network
    }

    # High availability needs backups, and point-in-time recovery (PostgreSQL) or the
    # binary log (MySQL); both are on for every instance, so that turning it on later works.
    backup_configuration {
      enabled                        = true
      point_in_time_recovery_enabled = local.postgres ? true : null
      binary_log_enabled             = local.postgres ? null : true
    }
  }

  lifecycle {
    # The disk grows on its own; disk_size_gb is only where it starts.
    ignore_changes = [settings[0].disk_size]
  }
}

resource "google_sql_database" "this" {
  name     = var.database_name
  instance = google_sql_database_instance.this.name
}

resource "google_sql_user" "this" {
  name     = var.username
  instance = google_sql_database_instance.this.name
  password = random_password.this.result
  # A PostgreSQL role that owns objects cannot be dropped; the instance goes with it anyway.
  deletion_policy = local.postgres ? "ABANDON" : null
}
