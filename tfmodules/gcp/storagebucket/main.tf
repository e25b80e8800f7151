locals {
  location = var.location != "" ? var.location : var.region
  # What an S3 client needs: list the bucket and find its location, and use its objects.
  access_roles = var.create_access_key ? toset(["roles/storage.objectAdmin", "roles/storage.legacyBucketReader"]) : toset([])
}

resource "google_storage_bucket" "this" {
  name                        = var.bucket_name
  location                    = local.location
  storage_class               = var.storage_class
  force_destroy               = var.force_destroy
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  labels                      = var.labels

  versioning {
    enabled = var.versioning
  }

  lifecycle {
    precondition {
      condition     = local.location != ""
      error_message = "Set location, or region (the Provider's region)."
    }
  }
}

# A service account whose HMAC key reaches only this bucket.
resource "google_service_account" "this" {
  count        = var.create_access_key ? 1 : 0
  account_id   = "bkt-${substr(sha1(var.bucket_name), 0, 20)}"
  display_name = substr("Access to bucket ${var.bucket_name}", 0, 100)
}

resource "google_storage_bucket_iam_member" "this" {
  for_each = local.access_roles
  bucket   = google_storage_bucket.this.name
  role     = each.value
  member   = "serviceAccount:${google_service_account.this[0].email}"

  lifecycle {
    # It names the bucket by name, which a new bucket (in another location) keeps: a new
    # bucket has no bindings.
    replace_triggered_by = [google_storage_bucket.this.id]
  }
}

resource "google_storage_hmac_key" "this" {
  count                 = var.create_access_key ? 1 : 0
  service_account_email = google_service_account.this[0].email
}
