variable "text" {
  type = string
}

variable "token" {
  type      = string
  sensitive = true
  default   = ""
}

resource "terraform_data" "this" {
  input = var.text
}

output "text" {
  value = terraform_data.this.output
}

output "token" {
  value     = var.token
  sensitive = true
}
