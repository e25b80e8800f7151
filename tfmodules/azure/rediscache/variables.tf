variable "cache_name" {
  description = "Globally unique name of the cache."
  type        = string
}

variable "resource_group_name" {
  description = "An existing resource group to put the cache in. Empty: a resource group of its own, named after the cache with \"-rg\" appended."
  type        = string
  default     = ""
  nullable    = false
}

variable "location" {
  description = "Azure location (region), from the Provider."
  type        = string
}

variable "tags" {
  description = "Tags to put on the cache, and on its resource group when one is made."
  type        = map(string)
  default     = {}
  nullable    = false
}

variable "sku_name" {
  description = "Basic (one node), Standard (a primary and a replica) or Premium."
  type        = string
  default     = "Basic"
  nullable    = false

  validation {
    condition     = contains(["Basic", "Standard", "Premium"], var.sku_name)
    error_message = "The sku_name must be Basic, Standard or Premium."
  }
}

variable "capacity" {
  description = "Size within the SKU: 0 to 6 (C0 to C6) for Basic and Standard, 1 to 5 (P1 to P5) for Premium, where 0 means 1."
  type        = number
  default     = 0
  nullable    = false
}

variable "redis_version" {
  description = "Major Redis version."
  type        = string
  default     = "6"
  nullable    = false
}

variable "replicas_per_primary" {
  description = "Replicas of the primary, 1 to 3 (Premium only). 0 leaves Azure's default."
  type        = number
  default     = 0
  nullable    = false
}
