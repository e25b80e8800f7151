variable "token" {
  type      = string
  sensitive = true
}

resource "terraform_data" "this" {
  input = { user = "app", token = var.token }
}
