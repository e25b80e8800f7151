output "endpoint" {
  description = "URL of the S3 endpoint serving the bucket: endpoint_url when set, else the bucket's regional endpoint."
  value       = var.endpoint_url != "" ? var.endpoint_url : "https://${aws_s3_bucket.this.bucket_regional_domain_name}"
}

output "bucket" {
  description = "Name of the bucket."
  value       = aws_s3_bucket.this.id
}

output "region" {
  description = "Region the bucket is in. A server that reports none (MinIO without a region set) counts as us-east-1, as in S3's own convention."
  value       = coalesce(aws_s3_bucket.this.region, "us-east-1")
}

output "arn" {
  description = "ARN of the bucket."
  value       = aws_s3_bucket.this.arn
}

output "access_key_id" {
  description = "Access key ID of the bucket's IAM user; null unless create_access_key."
  value       = one(aws_iam_access_key.this[*].id)
  sensitive   = true
}

output "secret_access_key" {
  description = "Secret access key of the bucket's IAM user; null unless create_access_key."
  value       = one(aws_iam_access_key.this[*].secret)
  sensitive   = true
}
