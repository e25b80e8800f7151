output "endpoint" {
  description = "IP address of the primary."
  value       = google_redis_instance.this.host
}

output "port" {
  description = "Port of the primary."
  value       = google_redis_instance.this.port
}

output "password" {
  description = "The AUTH string; null with auth_disabled."
  value       = var.auth_disabled ? null : google_redis_instance.this.auth_string
  sensitive   = true
}

output "read_endpoint" {
  description = "IP address that spreads reads over the read replicas; empty without them."
  value       = google_redis_instance.this.read_endpoint
}
