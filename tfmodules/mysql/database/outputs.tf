output "endpoint" {
  value = var.host
}

output "port" {
  value = var.port
}

output "database" {
  value = terraform_data.this.output.database
}

output "username" {
  value = terraform_data.this.output.role
}

output "password" {
  value     = random_password.this.result
  sensitive = true
}
