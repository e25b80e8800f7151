variable "bucket" {
  description = "Name of the bucket (after bucket_prefix)."
  type        = string
}

variable "bucket_prefix" {
  description = "Prefix of the bucket's name."
  type        = string
  default     = "store-"
}

variable "force_destroy" {
  description = "Delete every object when the bucket is destroyed."
  type        = bool
  default     = false
}

variable "object_lock_enabled" {
  description = "Enable object lock (and so versioning) on the bucket."
  type        = bool
  default     = false
}

variable "attach_public_policy" {
  description = "Attach a public-read bucket policy."
  type        = bool
  default     = true
}

variable "tags" {
  description = "Tags of the bucket."
  type        = map(string)
  default     = {}
}

variable "lifecycle_rule" {
  description = "Lifecycle rules, each with days."
  type        = any
  default     = []
}

variable "cors_rule" {
  description = "CORS rules by name."
  type        = map(map(any))
  default     = {}
}

variable "grants" {
  description = "Grants of the bucket's ACL."
  type = list(object({
    type        = string
    permissions = list(string)
    id          = optional(string)
  }))
  default = []
}

variable "port" {
  description = "Port of the bucket's endpoint, as a string (the module's README writes a number)."
  type        = string
  default     = "443"
}

variable "versioning_enabled" {
  description = "A flag as a string (the module's README writes a bool)."
  type        = string
  default     = "false"
}

variable "replication_token" {
  description = "Token of the replication target."
  type        = string
  default     = null
  sensitive   = true
}
