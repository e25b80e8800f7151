output "endpoint" {
  description = "Blob endpoint of the account, e.g. https://<account>.blob.core.windows.net/."
  value       = azurerm_storage_account.this.primary_blob_endpoint
}

output "bucket" {
  description = "Name of the blob container."
  value       = azurerm_storage_container.this.name
}

output "region" {
  description = "Location of the account."
  value       = azurerm_storage_account.this.location
}

output "account_name" {
  description = "Name of the storage account."
  value       = azurerm_storage_account.this.name
}

output "account_key" {
  description = "Primary access key of the account; null unless create_access_key."
  value       = var.create_access_key ? azurerm_storage_account.this.primary_access_key : null
  sensitive   = true
}
