variable "cluster_name" {
  description = "Name of the cluster, and prefix of its IAM roles."
  type        = string
}

variable "kubernetes_version" {
  description = "Kubernetes version of the control plane, e.g. \"1.33\"; empty takes EKS's default."
  type        = string
  default     = ""
  nullable    = false
}

variable "node_count" {
  description = "Number of nodes in the managed node group."
  type        = number
  default     = 2
  nullable    = false
}

variable "instance_types" {
  description = "Instance types of the nodes."
  type        = list(string)
  default     = ["t3.medium"]
  nullable    = false
}

variable "subnet_ids" {
  description = "Subnets (at least two, in different zones) for the cluster and nodes; empty makes a VPC with one subnet in each of two zones."
  type        = list(string)
  default     = []
  nullable    = false
}

variable "vpc_cidr" {
  description = "Address range of the VPC made when subnet_ids is empty."
  type        = string
  default     = "10.0.0.0/16"
  nullable    = false
}

variable "endpoint_private_only" {
  description = "Turn off the API server's public endpoint."
  type        = bool
  default     = false
  nullable    = false
}

variable "tags" {
  description = "Tags to put on the cluster and what the module makes for it."
  type        = map(string)
  default     = {}
  nullable    = false
}
