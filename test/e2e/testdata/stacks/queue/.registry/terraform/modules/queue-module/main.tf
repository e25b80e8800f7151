variable "name" {
  description = "Name of the queue."
  type        = string
}
variable "retention_days" {
  description = "How long messages are kept."
  type        = number
  default     = 7
}
resource "terraform_data" "queue" {
  input = "${var.name}.${var.retention_days}d.queue.internal"
}
output "endpoint" { value = terraform_data.queue.output }
