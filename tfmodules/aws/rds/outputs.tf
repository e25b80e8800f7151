output "endpoint" {
  description = "Host name clients connect to."
  value       = aws_db_instance.this.address
}

output "port" {
  description = "5432 (PostgreSQL) or 3306 (MySQL)."
  value       = aws_db_instance.this.port
}

output "username" {
  description = "The master user."
  value       = aws_db_instance.this.username
}

output "password" {
  description = "The master user's generated password."
  value       = random_password.this.result
  sensitive   = true
}

output "database" {
  description = "Name of the database."
  value       = aws_db_instance.this.db_name
}

output "identifier" {
  description = "The DB instance identifier."
  value       = aws_db_instance.this.identifier
}

output "arn" {
  description = "ARN of the DB instance."
  value       = aws_db_instance.this.arn
}
