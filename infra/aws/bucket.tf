# The bucket: tables under var.table_prefixes, everything of a job under
# jobs/ (shuffle objects, results, TaskSpecs passed by reference). The
# coordinators delete a finished job's objects after var.retention; the
# lifecycle rule expires whatever is left under jobs/ after
# var.lifecycle_days, so nothing stays when no coordinator runs GC.

resource "aws_s3_bucket" "data" {
  bucket = var.bucket
}

resource "aws_s3_bucket_public_access_block" "data" {
  bucket                  = aws_s3_bucket.data.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "data" {
  bucket = aws_s3_bucket.data.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

resource "aws_s3_bucket_lifecycle_configuration" "data" {
  bucket = aws_s3_bucket.data.id
  rule {
    id     = "expire-job-objects"
    status = "Enabled"
    filter {
      prefix = "jobs/"
    }
    expiration {
      days = var.lifecycle_days
    }
    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }
}
