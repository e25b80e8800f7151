output "endpoint" {
  description = "The S3-compatible XML API endpoint of Cloud Storage."
  value       = "https://storage.googleapis.com"
}

output "bucket" {
  description = "Name of the bucket."
  value       = google_storage_bucket.this.name
}

output "region" {
  description = "Location of the bucket, lowercase (e.g. europe-west1, eu)."
  value       = lower(google_storage_bucket.this.location)
}

output "url" {
  description = "gs:// URL of the bucket."
  value       = google_storage_bucket.this.url
}

output "access_key_id" {
  description = "Access ID of the HMAC key; null unless create_access_key."
  value       = one(google_storage_hmac_key.this[*].access_id)
  sensitive   = true
}

output "secret_access_key" {
  description = "Secret of the HMAC key; null unless create_access_key."
  value       = one(google_storage_hmac_key.this[*].secret)
  sensitive   = true
}
