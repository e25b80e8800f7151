variable "replication_group_id" {
  description = "Name of the replication group, or of the single-node cache cluster."
  type        = string
}

variable "engine_version" {
  description = "Redis version, e.g. \"7.1\"."
  type        = string
  default     = "7.1"
  nullable    = false
}

variable "node_type" {
  description = "Node type of the cache nodes."
  type        = string
  default     = "cache.t3.micro"
  nullable    = false
}

variable "nodes" {
  description = "Number of nodes: a primary and nodes-1 replicas."
  type        = number
  default     = 1
  nullable    = false

  validation {
    condition     = var.nodes >= 1 && var.nodes <= 6
    error_message = "The number of nodes must be between 1 and 6."
  }
}

variable "high_availability" {
  description = "Automatic failover and Multi-AZ; needs at least 2 nodes."
  type        = bool
  default     = false
  nullable    = false
}

variable "auth_token" {
  description = "In-transit encryption and a generated AUTH password."
  type        = bool
  default     = false
  nullable    = false
}

variable "subnet_group_name" {
  description = "Cache subnet group the nodes are placed in; empty takes the default VPC."
  type        = string
  default     = ""
  nullable    = false
}

variable "security_group_ids" {
  description = "Security groups guarding the nodes; empty takes the VPC's default group."
  type        = list(string)
  default     = []
  nullable    = false
}

variable "tags" {
  description = "Tags to put on the cache."
  type        = map(string)
  default     = {}
  nullable    = false
}
