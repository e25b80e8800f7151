locals {
  # An empty name means the same as none: let AWS generate one.
  bucket_name = var.bucket_name == "" ? null : var.bucket_name
}

resource "aws_s3_bucket" "this" {
  bucket        = local.bucket_name
  bucket_prefix = local.bucket_name == null ? "terraplane-" : null
  force_destroy = var.force_destroy
  tags          = var.tags
}

# Always managed, so that turning versioning off suspends it rather than leaving it on.
resource "aws_s3_bucket_versioning" "this" {
  bucket = aws_s3_bucket.this.id

  versioning_configuration {
    status = var.versioning ? "Enabled" : "Suspended"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "this" {
  count  = var.encryption == "" ? 0 : 1
  bucket = aws_s3_bucket.this.id

  # One bucket configuration change at a time: MinIO rewrites a bucket's whole
  # metadata on each change, so concurrent ones can undo each other.
  depends_on = [aws_s3_bucket_versioning.this]

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = var.encryption
    }
    bucket_key_enabled = var.encryption == "aws:kms" ? true : null
  }
}

# An IAM user whose access key reaches only this bucket (AWS only).
resource "aws_iam_user" "this" {
  count         = var.create_access_key ? 1 : 0
  name          = substr("s3-${aws_s3_bucket.this.id}", 0, 64)
  path          = "/terraplane/"
  force_destroy = true
  tags          = var.tags
}

resource "aws_iam_user_policy" "this" {
  count = var.create_access_key ? 1 : 0
  name  = "bucket-access"
  user  = aws_iam_user.this[0].name

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid    = "Bucket"
        Effect = "Allow"
        Action = [
          "s3:GetBucketLocation",
          "s3:ListBucket",
          "s3:ListBucketMultipartUploads",
          "s3:ListBucketVersions",
        ]
        Resource = aws_s3_bucket.this.arn
      },
      {
        Sid    = "Objects"
        Effect = "Allow"
        Action = [
          "s3:AbortMultipartUpload",
          "s3:DeleteObject",
          "s3:DeleteObjectVersion",
          "s3:GetObject",
          "s3:GetObjectVersion",
          "s3:ListMultipartUploadParts",
          "s3:PutObject",
        ]
        Resource = "${aws_s3_bucket.this.arn}/*"
      },
    ]
  })
}

resource "aws_iam_access_key" "this" {
  count = var.create_access_key ? 1 : 0
  user  = aws_iam_user.this[0].name
}
