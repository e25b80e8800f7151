# A storage module shaped like the popular public ones: an unconditional caller-identity
# lookup, local submodules, object lock, inputs typed any, map(map(any)) and list(object),
# a sensitive input, and (in generated.tf, which the test writes) 200 more variables.

data "aws_caller_identity" "current" {}

module "naming" {
  source = "./modules/naming"
  prefix = var.bucket_prefix
  name   = var.bucket
}

module "bucket" {
  source              = "./modules/bucket"
  bucket              = module.naming.name
  force_destroy       = var.force_destroy
  object_lock_enabled = var.object_lock_enabled
  tags                = merge(var.tags, { account = data.aws_caller_identity.current.account_id })
}

locals {
  # Terraform checks the values inside lifecycle_rule (typed any) here, not the API server.
  expiration_days = [for rule in var.lifecycle_rule : rule.days + 0]
  grantees        = [for grant in var.grants : "${grant.type}:${join("+", grant.permissions)}"]
}
