output "endpoint" {
  description = "IP address clients connect to: the private one with private_network, else the public one."
  value       = var.private_network != "" ? google_sql_database_instance.this.private_ip_address : google_sql_database_instance.this.public_ip_address
}

output "port" {
  description = "5432 (PostgreSQL) or 3306 (MySQL)."
  value       = local.port
}

output "username" {
  description = "The database's owner."
  value       = google_sql_user.this.name
}

output "password" {
  description = "The owner's generated password."
  value       = random_password.this.result
  sensitive   = true
}

output "database" {
  description = "Name of the database."
  value       = google_sql_database.this.name
}

output "instance_name" {
  description = "Name of the instance."
  value       = google_sql_database_instance.this.name
}

output "connection_name" {
  description = "project:region:instance, as the Cloud SQL Auth Proxy and connectors take it."
  value       = google_sql_database_instance.this.connection_name
}
