variable "cluster_name" {
  description = "Name of the cluster."
  type        = string
}

variable "location" {
  description = "A region (a regional cluster, with nodes in each of its zones) or a zone (a zonal cluster). Empty: region."
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

variable "project" {
  description = "The Provider's project, named in the kubeconfig."
  type        = string
  default     = ""
  nullable    = false
}

variable "kubernetes_version" {
  description = "Minimum Kubernetes version of the control plane, e.g. \"1.33\". Empty: the release channel's default."
  type        = string
  default     = ""
  nullable    = false
}

variable "node_count" {
  description = "Nodes in each of the node pool's zones."
  type        = number
  default     = 1
  nullable    = false
}

variable "machine_type" {
  description = "Machine type of the nodes."
  type        = string
  default     = "e2-standard-2"
  nullable    = false
}

variable "network" {
  description = "VPC network of the cluster. Empty: the default network."
  type        = string
  default     = ""
  nullable    = false
}

variable "subnetwork" {
  description = "Subnetwork of network the nodes get their addresses from."
  type        = string
  default     = ""
  nullable    = false
}

variable "release_channel" {
  description = "RAPID, REGULAR, STABLE or UNSPECIFIED (no channel)."
  type        = string
  default     = "REGULAR"
  nullable    = false
}

variable "deletion_protection" {
  description = "Refuse to delete the cluster."
  type        = bool
  default     = false
  nullable    = false
}

variable "labels" {
  description = "Labels to put on the cluster."
  type        = map(string)
  default     = {}
  nullable    = false
}
