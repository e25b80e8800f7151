resource "terraform_data" "network" {
  input = {
    name    = var.name
    size    = var.size
    subnets = var.subnets
    tags    = var.tags
  }
}

output "endpoint" {
  value = "net://${var.name}"
}

output "inputs" {
  description = "The inputs the module received, as JSON."
  value       = jsonencode(terraform_data.network.output)
}

output "token_hash" {
  value     = sha256(var.token)
  sensitive = true
}
