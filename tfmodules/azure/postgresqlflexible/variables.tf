variable "server_name" {
  description = "Globally unique name of the server."
  type        = string
}

variable "resource_group_name" {
  description = "An existing resource group to put the server in. Empty: a resource group of its own, named after the server with \"-rg\" appended."
  type        = string
  default     = ""
  nullable    = false
}

variable "location" {
  description = "Azure location (region), from the Provider."
  type        = string
}

variable "tags" {
  description = "Tags to put on the server, and on its resource group when one is made."
  type        = map(string)
  default     = {}
  nullable    = false
}

variable "engine_version" {
  description = "Major version, e.g. \"16\"."
  type        = string
  default     = "16"
  nullable    = false
}

variable "sku_name" {
  description = "Compute size, e.g. B_Standard_B1ms (Burstable) or GP_Standard_D2ds_v5. Burstable sizes have no high availability."
  type        = string
  default     = "B_Standard_B1ms"
  nullable    = false
}

variable "storage_gb" {
  description = "Storage size in GB."
  type        = number
  default     = 32
  nullable    = false
}

variable "high_availability" {
  description = "A zone-redundant standby that takes over on failure."
  type        = bool
  default     = false
  nullable    = false
}

variable "administrator_login" {
  description = "The server's administrator; its password is generated."
  type        = string
  default     = "terraplane"
  nullable    = false
}

variable "database_name" {
  description = "Database made on the server."
  type        = string
  default     = "app"
  nullable    = false
}

variable "delegated_subnet_id" {
  description = "A subnet delegated to PostgreSQL flexible servers, for private access. Empty: public access, with no firewall rule."
  type        = string
  default     = ""
  nullable    = false
}

variable "private_dns_zone_id" {
  description = "Private DNS zone that resolves the server's name, with delegated_subnet_id."
  type        = string
  default     = ""
  nullable    = false
}
