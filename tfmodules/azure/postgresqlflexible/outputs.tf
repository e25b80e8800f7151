output "endpoint" {
  description = "Fully qualified domain name of the server."
  value       = azurerm_postgresql_flexible_server.this.fqdn
}

output "port" {
  description = "5432."
  value       = 5432
}

output "username" {
  description = "The server's administrator."
  value       = azurerm_postgresql_flexible_server.this.administrator_login
}

output "password" {
  description = "The administrator's generated password."
  value       = random_password.this.result
  sensitive   = true
}

output "database" {
  description = "Name of the database."
  value       = azurerm_postgresql_flexible_server_database.this.name
}

output "resource_group_name" {
  description = "Resource group of the server."
  value       = local.resource_group_name
}
