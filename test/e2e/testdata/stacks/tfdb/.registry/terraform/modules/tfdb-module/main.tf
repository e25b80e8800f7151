variable "name" { type = string }
variable "tier" {
  type    = string
  default = "small"
}
resource "terraform_data" "db" {
  input = "${var.name}.${var.tier}.db.internal"
}
output "endpoint" { value = terraform_data.db.output }
output "port" { value = "5432" }
