variable "cluster_name" {
  type        = string
  default     = "cluster"
  description = "Name of the cluster: the prefix of its data directory and the name of its kubeconfig context."
}

variable "bin_dir" {
  type        = string
  description = "Directory that holds the etcd and kube-apiserver binaries (the toolchain's, ~/.cache/terraplane/bin)."
}

variable "state_dir" {
  type        = string
  default     = "/tmp/terraplane-clusters"
  description = "Directory under which each cluster keeps its etcd data, certificates, logs and process ids."
}
