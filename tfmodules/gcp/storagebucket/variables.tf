variable "bucket_name" {
  description = "Globally unique name of the bucket."
  type        = string
}

variable "location" {
  description = "Region, dual-region or multi-region (EU, US) of the bucket. Empty: region."
  type        = string
  default     = ""
  nullable    = false
}

variable "region" {
  description = "The Provider's region, the location when location is empty."
  type        = string
  default     = ""
  nullable    = false
}

variable "storage_class" {
  description = "Default storage class of new objects: STANDARD, NEARLINE, COLDLINE or ARCHIVE."
  type        = string
  default     = "STANDARD"
  nullable    = false
}

variable "versioning" {
  description = "Keep every version of every object."
  type        = bool
  default     = false
  nullable    = false
}

variable "force_destroy" {
  description = "Delete every object (and version) in the bucket when the bucket is destroyed."
  type        = bool
  default     = false
  nullable    = false
}

variable "labels" {
  description = "Labels to put on the bucket."
  type        = map(string)
  default     = {}
  nullable    = false
}

variable "create_access_key" {
  description = "Make a service account that may use only this bucket, and an HMAC key of it for the S3-compatible XML API."
  type        = bool
  default     = false
  nullable    = false
}
