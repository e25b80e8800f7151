variable "database_name" {
  description = "Database to create (owned by role_name)."
  type        = string
}

variable "role_name" {
  description = "Login role to create; it owns the database."
  type        = string
}

variable "engine_version" {
  description = "Major server version the class promises; empty skips the check."
  type        = string
  default     = ""
}

variable "connection_limit" {
  description = "Connection limit of the role; -1 means none."
  type        = number
  default     = -1
}

variable "host" {
  description = "Server host, as clients should reach it (for the endpoint output)."
  type        = string
}

variable "port" {
  description = "Server port (for the port output)."
  type        = number
}

variable "ssl_mode" {
  description = "libpq sslmode of the admin connection (filled in from the Provider); the server probe reads with disable where it is prefer or allow."
  type        = string
  default     = "prefer"
}
