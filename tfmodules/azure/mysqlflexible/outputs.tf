output "endpoint" {
  description = "Fully qualified domain name of the server."
  value       = azurerm_mysql_flexible_server.this.fqdn
}

output "port" {
  description = "3306."
  value       = 3306
}

output "username" {
  description = "The server's administrator."
  value       = azurerm_mysql_flexible_server.this.administrator_login
}

output "password" {
  description = "The administrator's generated password."
  value       = random_password.this.result
  sensitive   = true
}

output "database" {
  description = "Name of the database."
  value       = azurerm_mysql_flexible_database.this.name
}

output "resource_group_name" {
  description = "Resource group of the server."
  value       = local.resource_group_name
}
