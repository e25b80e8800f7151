output "endpoint" {
  description = "Host name of the cache."
  value       = azurerm_redis_cache.this.hostname
}

output "port" {
  description = "The TLS port (6380); the plain port is off."
  value       = azurerm_redis_cache.this.ssl_port
}

output "password" {
  description = "Primary access key of the cache."
  value       = azurerm_redis_cache.this.primary_access_key
  sensitive   = true
}
