variable "cluster_name" {
  description = "Globally unique name of the cluster."
  type        = string
}

variable "resource_group_name" {
  description = "An existing resource group to put the cluster in. Empty: a resource group of its own, named after the cluster with \"-rg\" appended."
  type        = string
  default     = ""
  nullable    = false
}

variable "location" {
  description = "Azure location (region), from the Provider."
  type        = string
}

variable "tags" {
  description = "Tags to put on the cluster, and on its resource group when one is made."
  type        = map(string)
  default     = {}
  nullable    = false
}

variable "kubernetes_version" {
  description = "Kubernetes version, e.g. \"1.33\". Empty: Azure's default."
  type        = string
  default     = ""
  nullable    = false
}

variable "node_count" {
  description = "Nodes in the default node pool."
  type        = number
  default     = 1
  nullable    = false
}

variable "vm_size" {
  description = "VM size of the nodes."
  type        = string
  default     = "Standard_D2s_v5"
  nullable    = false
}
