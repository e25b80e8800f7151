variable "instance_name" {
  description = "Name of the instance. Null or empty lets Terraform generate one."
  type        = string
  default     = null
}

variable "engine" {
  description = "POSTGRES or MYSQL."
  type        = string
  default     = "POSTGRES"
  nullable    = false

  validation {
    condition     = contains(["POSTGRES", "MYSQL"], var.engine)
    error_message = "The engine must be \"POSTGRES\" or \"MYSQL\"."
  }
}

variable "engine_version" {
  description = "Major (or major.minor) version, e.g. \"16\" or \"8.0\". Empty: PostgreSQL 16 or MySQL 8.0."
  type        = string
  default     = ""
  nullable    = false
}

variable "tier" {
  description = "Machine type of the instance."
  type        = string
  default     = "db-custom-1-3840"
  nullable    = false
}

variable "disk_size_gb" {
  description = "Initial disk size in GB; the disk grows on its own after that."
  type        = number
  default     = 10
  nullable    = false
}

variable "high_availability" {
  description = "REGIONAL availability: a standby in another zone that takes over on failure."
  type        = bool
  default     = false
  nullable    = false
}

variable "database_name" {
  description = "Database made on the instance."
  type        = string
  default     = "app"
  nullable    = false
}

variable "username" {
  description = "The database's owner; its password is generated."
  type        = string
  default     = "app"
  nullable    = false
}

variable "private_network" {
  description = "Self link of a VPC network with private services access: the instance gets a private IP there and no public one. Empty: a public IP with no authorized networks."
  type        = string
  default     = ""
  nullable    = false
}

variable "deletion_protection" {
  description = "Refuse to delete the instance (in Google Cloud and in Terraform)."
  type        = bool
  default     = false
  nullable    = false
}

variable "labels" {
  description = "Labels to put on the instance."
  type        = map(string)
  default     = {}
  nullable    = false
}
