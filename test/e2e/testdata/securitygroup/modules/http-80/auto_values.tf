# This file is generated in the upstream module from its rules; do not edit it by hand.
variable "auto_ingress_rules" {
  description = "Ingress rules of this preset"
  type        = list(string)
  default     = ["http-80-tcp"]
}
