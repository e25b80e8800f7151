variable "create" {
  description = "Whether to create the security group and its rules"
  type        = bool
  default     = true
}

variable "name" {
  description = "Name of the security group"
  type        = string
}

variable "description" {
  description = "Description of the security group"
  type        = string
  default     = "Security Group managed by Terraform"
}

variable "vpc_id" {
  description = "ID of the VPC the security group is made in (the default VPC when null)"
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags of the security group"
  type        = map(string)
  default     = {}
}

variable "ingress_cidr_blocks" {
  description = "IPv4 CIDR ranges the ingress rules admit"
  type        = list(string)
  default     = []
}
