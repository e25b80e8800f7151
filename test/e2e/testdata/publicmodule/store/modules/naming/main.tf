variable "prefix" {
  type = string
}

variable "name" {
  type = string
}

output "name" {
  value = lower("${var.prefix}${var.name}")
}
