variable "database_name" {
  description = "Database to create (owned by role_name)."
  type        = string
}

variable "role_name" {
  description = "User to create; it gets all privileges on the database."
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

variable "observed" {
  description = "What the server has now, read by the controller before each plan (terraform cannot read a MySQL server): whether the database and user exist, the user's connection limit, and the mark of the last converge. Null: not read, no drift seen."
  type = object({
    database         = bool
    user             = bool
    connection_limit = number
    mark             = string
  })
  default = null
}
