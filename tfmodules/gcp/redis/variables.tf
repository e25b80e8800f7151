variable "instance_name" {
  description = "Name of the instance."
  type        = string
}

variable "region" {
  description = "Region of the instance; empty takes the provider's."
  type        = string
  default     = ""
  nullable    = false
}

variable "redis_version" {
  description = "Major.minor Redis version, e.g. \"7.2\". Empty takes Google's default."
  type        = string
  default     = ""
  nullable    = false
}

variable "memory_size_gb" {
  description = "Memory of the instance in GB."
  type        = number
  default     = 1
  nullable    = false
}

variable "high_availability" {
  description = "The STANDARD_HA tier: a replica in another zone that takes over on failure. Changing it replaces the instance."
  type        = bool
  default     = false
  nullable    = false
}

variable "read_replicas" {
  description = "Replicas that serve reads, 0 to 5 (STANDARD_HA only)."
  type        = number
  default     = 0
  nullable    = false

  validation {
    condition     = var.read_replicas >= 0 && var.read_replicas <= 5
    error_message = "The read_replicas must be 0 to 5."
  }
}

variable "authorized_network" {
  description = "Self link of the VPC network clients connect from. Empty: the project's default network."
  type        = string
  default     = ""
  nullable    = false
}

variable "auth_disabled" {
  description = "Turn off the AUTH password."
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
