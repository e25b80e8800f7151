locals {
  ca_data = aws_eks_cluster.this.certificate_authority[0].data
}

output "endpoint" {
  description = "URL of the cluster's API server."
  value       = aws_eks_cluster.this.endpoint
}

output "cluster_ca" {
  description = "PEM certificate of the cluster's CA (as given when it is not base64, as an emulator's may be)."
  value       = try(base64decode(local.ca_data), local.ca_data)
}

output "kubeconfig" {
  description = "A kubeconfig that authenticates with the AWS CLI (aws eks get-token) as whoever runs it; it holds no credential."
  value = yamlencode({
    apiVersion      = "v1"
    kind            = "Config"
    current-context = var.cluster_name
    clusters = [{
      name    = var.cluster_name
      cluster = { server = aws_eks_cluster.this.endpoint, certificate-authority-data = local.ca_data }
    }]
    contexts = [{ name = var.cluster_name, context = { cluster = var.cluster_name, user = var.cluster_name } }]
    users = [{
      name = var.cluster_name
      user = {
        exec = {
          apiVersion = "client.authentication.k8s.io/v1beta1"
          command    = "aws"
          args       = ["eks", "get-token", "--cluster-name", var.cluster_name, "--region", data.aws_region.current.name, "--output", "json"]
        }
      }
    }]
  })
}

output "cluster_name" {
  description = "Name of the cluster."
  value       = aws_eks_cluster.this.name
}

output "node_role_arn" {
  description = "ARN of the nodes' IAM role."
  value       = aws_iam_role.this["node"].arn
}
