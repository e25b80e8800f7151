variable "bucket_name" {
  description = "Name of the bucket. Null or empty lets AWS generate a unique name starting with \"terraplane-\"."
  type        = string
  default     = null
}

variable "versioning" {
  description = "Keep every version of every object. Turning it off suspends versioning; existing versions stay."
  type        = bool
  default     = false
  nullable    = false
}

variable "encryption" {
  description = "Default server-side encryption: \"AES256\", \"aws:kms\" (the account's aws/s3 key), or empty to leave the server's default."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = contains(["", "AES256", "aws:kms"], var.encryption)
    error_message = "The encryption must be \"\", \"AES256\" or \"aws:kms\"."
  }
}

variable "force_destroy" {
  description = "Delete every object (and version) in the bucket when the bucket is destroyed."
  type        = bool
  default     = false
  nullable    = false
}

variable "tags" {
  description = "Tags to put on the bucket (and on the IAM user, when one is made)."
  type        = map(string)
  default     = {}
  nullable    = false
}

variable "create_access_key" {
  description = "Make an IAM user with an access key whose inline policy reaches only this bucket. AWS only: MinIO has no IAM API."
  type        = bool
  default     = false
  nullable    = false
}

variable "endpoint_url" {
  description = "The S3 endpoint the caller's provider uses, if overridden (e.g. MinIO). Only used for the endpoint output."
  type        = string
  default     = ""
  nullable    = false
}
