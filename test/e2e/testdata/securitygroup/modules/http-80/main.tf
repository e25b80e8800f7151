module "sg" {
  source = "../../"

  create      = var.create
  name        = var.name
  description = var.description
  vpc_id      = var.vpc_id
  tags        = var.tags

  ingress_rules       = var.auto_ingress_rules
  ingress_cidr_blocks = var.ingress_cidr_blocks
}
