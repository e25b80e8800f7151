variable "name" {
  type        = string
  description = "Name of the network."
  validation {
    condition     = can(regex("^[a-z][a-z0-9-]*$", var.name)) && length(var.name) <= 20
    error_message = "name must be lower-case letters, digits and dashes, at most 20 characters."
  }
}

variable "size" {
  type        = number
  default     = 3
  description = "Number of availability zones."
  validation {
    condition     = floor(var.size) == var.size
    error_message = "size must be a whole number."
  }
}

variable "subnets" {
  type = list(object({
    name   = string
    cidr   = string
    public = optional(bool, false)
  }))
  description = "Subnets of the network."
}

variable "tags" {
  type    = map(string)
  default = {}
}

variable "token" {
  type        = string
  sensitive   = true
  default     = ""
  description = "Flow log delivery token."
}
