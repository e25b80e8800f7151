locals {
  make_vpc   = length(var.subnet_ids) == 0
  subnet_ids = local.make_vpc ? aws_subnet.this[*].id : var.subnet_ids
}

data "aws_region" "current" {}

data "aws_availability_zones" "available" {
  count = local.make_vpc ? 1 : 0
  state = "available"
}

resource "aws_vpc" "this" {
  count                = local.make_vpc ? 1 : 0
  cidr_block           = var.vpc_cidr
  enable_dns_support   = true
  enable_dns_hostnames = true
  tags                 = merge(var.tags, { Name = var.cluster_name })
}

resource "aws_subnet" "this" {
  count                   = local.make_vpc ? 2 : 0
  vpc_id                  = aws_vpc.this[0].id
  cidr_block              = cidrsubnet(var.vpc_cidr, 4, count.index)
  availability_zone       = data.aws_availability_zones.available[0].names[count.index]
  map_public_ip_on_launch = true
  tags                    = merge(var.tags, { Name = "${var.cluster_name}-${count.index}" })
}

data "aws_iam_policy_document" "assume" {
  for_each = { cluster = "eks.amazonaws.com", node = "ec2.amazonaws.com" }
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = [each.value]
    }
  }
}

resource "aws_iam_role" "this" {
  for_each           = data.aws_iam_policy_document.assume
  name               = "${var.cluster_name}-${each.key}"
  assume_role_policy = each.value.json
  tags               = var.tags
}

resource "aws_iam_role_policy_attachment" "this" {
  for_each = {
    cluster-AmazonEKSClusterPolicy          = "cluster"
    node-AmazonEKSWorkerNodePolicy          = "node"
    node-AmazonEKS_CNI_Policy               = "node"
    node-AmazonEC2ContainerRegistryReadOnly = "node"
  }
  role       = aws_iam_role.this[each.value].name
  policy_arn = "arn:aws:iam::aws:policy/${trimprefix(each.key, "${each.value}-")}"
}

resource "aws_eks_cluster" "this" {
  name     = var.cluster_name
  role_arn = aws_iam_role.this["cluster"].arn
  version  = var.kubernetes_version == "" ? null : var.kubernetes_version
  tags     = var.tags

  vpc_config {
    subnet_ids              = local.subnet_ids
    endpoint_public_access  = !var.endpoint_private_only
    endpoint_private_access = true
  }

  depends_on = [aws_iam_role_policy_attachment.this]
}

resource "aws_eks_node_group" "this" {
  cluster_name    = aws_eks_cluster.this.name
  node_group_name = "default"
  node_role_arn   = aws_iam_role.this["node"].arn
  subnet_ids      = local.subnet_ids
  instance_types  = var.instance_types
  tags            = var.tags

  scaling_config {
    desired_size = var.node_count
    min_size     = var.node_count
    max_size     = var.node_count
  }

  depends_on = [aws_iam_role_policy_attachment.this]
}
