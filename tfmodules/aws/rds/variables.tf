variable "identifier" {
  description = "DB instance identifier."
  type        = string
}

variable "engine" {
  description = "postgres or mysql."
  type        = string
  default     = "postgres"
  nullable    = false

  validation {
    condition     = contains(["postgres", "mysql"], var.engine)
    error_message = "The engine must be \"postgres\" or \"mysql\"."
  }
}

variable "engine_version" {
  description = "Major (or major.minor) version, e.g. \"16\" or \"8.0\". Empty: PostgreSQL 16 or MySQL 8.0."
  type        = string
  default     = ""
  nullable    = false
}

variable "instance_class" {
  description = "DB instance class."
  type        = string
  default     = "db.t3.micro"
  nullable    = false
}

variable "storage_gb" {
  description = "Allocated storage in GB."
  type        = number
  default     = 20
  nullable    = false
}

variable "high_availability" {
  description = "Multi-AZ: a standby in another zone."
  type        = bool
  default     = false
  nullable    = false
}

variable "encryption" {
  description = "Encrypt storage at rest."
  type        = bool
  default     = false
  nullable    = false
}

variable "kms_key_id" {
  description = "ARN of the KMS key that encrypts storage; empty takes the account's default RDS key."
  type        = string
  default     = ""
  nullable    = false
}

variable "database_name" {
  description = "Name of the database made on the instance."
  type        = string
}

variable "username" {
  description = "Master user name; its password is generated."
  type        = string
}

variable "db_subnet_group_name" {
  description = "DB subnet group the instance is placed in; empty takes the default VPC."
  type        = string
  default     = ""
  nullable    = false
}

variable "vpc_security_group_ids" {
  description = "Security groups guarding the instance; empty takes the VPC's default group."
  type        = list(string)
  default     = []
  nullable    = false
}

variable "parameters" {
  description = "Engine parameters by name; set, they go into a DB parameter group made for the instance."
  type        = map(string)
  default     = {}
  nullable    = false
}

variable "publicly_accessible" {
  description = "Give the instance a public address."
  type        = bool
  default     = false
  nullable    = false
}

variable "final_snapshot" {
  description = "Take a snapshot named <identifier>-final when the instance is destroyed."
  type        = bool
  default     = false
  nullable    = false
}

variable "deletion_protection" {
  description = "Refuse to delete the instance."
  type        = bool
  default     = false
  nullable    = false
}

variable "tags" {
  description = "Tags to put on the instance."
  type        = map(string)
  default     = {}
  nullable    = false
}
