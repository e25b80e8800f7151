locals {
  postgres = var.engine == "postgres"
  version  = var.engine_version != "" ? var.engine_version : (local.postgres ? "16" : "8.0")
  # A parameter group's family: postgres16, mysql8.0.
  family = local.postgres ? "postgres${split(".", local.version)[0]}" : "mysql${join(".", slice(split(".", "${local.version}.0"), 0, 2))}"
}

resource "random_password" "this" {
  length      = 32
  special     = false
  min_upper   = 1
  min_lower   = 1
  min_numeric = 1
}

resource "aws_db_parameter_group" "this" {
  count  = length(var.parameters) > 0 ? 1 : 0
  name   = var.identifier
  family = local.family
  tags   = var.tags

  dynamic "parameter" {
    for_each = var.parameters
    content {
      name         = parameter.key
      value        = parameter.value
      apply_method = "pending-reboot"
    }
  }
}

resource "aws_db_instance" "this" {
  identifier             = var.identifier
  engine                 = var.engine
  engine_version         = local.version
  instance_class         = var.instance_class
  allocated_storage      = var.storage_gb
  multi_az               = var.high_availability
  storage_encrypted      = var.encryption
  kms_key_id             = var.kms_key_id == "" ? null : var.kms_key_id
  db_name                = var.database_name
  username               = var.username
  password               = random_password.this.result
  db_subnet_group_name   = var.db_subnet_group_name == "" ? null : var.db_subnet_group_name
  vpc_security_group_ids = length(var.vpc_security_group_ids) == 0 ? null : var.vpc_security_group_ids
  parameter_group_name   = length(var.parameters) > 0 ? aws_db_parameter_group.this[0].name : null
  publicly_accessible    = var.publicly_accessible
  deletion_protection    = var.deletion_protection

  skip_final_snapshot       = !var.final_snapshot
  final_snapshot_identifier = var.final_snapshot ? "${var.identifier}-final" : null

  # Changes are made at once, not in the next maintenance window, so that status
  # speaks for what the instance is.
  apply_immediately = true
  tags              = var.tags
}
