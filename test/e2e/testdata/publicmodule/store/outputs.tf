output "bucket_id" {
  value = module.bucket.id
}

output "bucket_arn" {
  value = module.bucket.arn
}

output "account_id" {
  value = data.aws_caller_identity.current.account_id
}

output "public_policy" {
  value = var.attach_public_policy
}

output "port" {
  value = var.port
}

output "versioning_enabled" {
  value = var.versioning_enabled
}

output "expiration_days" {
  value = local.expiration_days
}

output "grantees" {
  value = local.grantees
}

output "cors_rules" {
  value = length(var.cors_rule)
}

output "replication_token_set" {
  value = nonsensitive(var.replication_token != null)
}
