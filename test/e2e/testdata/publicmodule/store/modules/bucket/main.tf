terraform {
  required_providers {
    aws = {
      source = "hashicorp/aws"
    }
  }
}

variable "bucket" {
  type = string
}

variable "force_destroy" {
  type = bool
}

variable "object_lock_enabled" {
  type = bool
}

variable "tags" {
  type = map(string)
}

resource "aws_s3_bucket" "this" {
  bucket              = var.bucket
  force_destroy       = var.force_destroy
  object_lock_enabled = var.object_lock_enabled
  tags                = var.tags
}

output "id" {
  value = aws_s3_bucket.this.id
}

output "arn" {
  value = aws_s3_bucket.this.arn
}
