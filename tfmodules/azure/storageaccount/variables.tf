variable "account_name" {
  description = "Globally unique name of the storage account."
  type        = string
}

variable "resource_group_name" {
  description = "An existing resource group to put the storage account in. Empty: a resource group of its own, named after the storage account with \"-rg\" appended."
  type        = string
  default     = ""
  nullable    = false
}

variable "location" {
  description = "Azure location (region), from the Provider."
  type        = string
}

variable "tags" {
  description = "Tags to put on the storage account, and on its resource group when one is made."
  type        = map(string)
  default     = {}
  nullable    = false
}

variable "container_name" {
  description = "Name of the private blob container."
  type        = string
  default     = "data"
  nullable    = false
}

variable "replication_type" {
  description = "LRS, ZRS, GRS, RAGRS, GZRS or RAGZRS."
  type        = string
  default     = "LRS"
  nullable    = false
}

variable "versioning" {
  description = "Keep every version of every blob."
  type        = bool
  default     = false
  nullable    = false
}

variable "create_access_key" {
  description = "Hand out the account's primary access key (the account_key output)."
  type        = bool
  default     = false
  nullable    = false
}
