variable "function_name" {
  type        = string
  default     = "sluice-function"
  description = "Lambda function name (sluice coordinator serve --lambda-function)"
}

variable "bucket" {
  type        = string
  description = "S3 bucket holding sluice's tables, plans and shuffle objects"
}

variable "prefix" {
  type        = string
  default     = ""
  description = "key prefix of sluice's objects in the bucket; the role is limited to it"
}

variable "zip_path" {
  type        = string
  description = "function.zip built by make function (bin/lambda/<arch>/function.zip)"
}

variable "architecture" {
  type        = string
  default     = "arm64"
  description = "arm64 (bin/lambda/arm64) or x86_64 (bin/lambda/amd64)"
  validation {
    condition     = contains(["arm64", "x86_64"], var.architecture)
    error_message = "architecture must be arm64 or x86_64"
  }
}

variable "memory_size" {
  type    = number
  default = 2048
}

variable "timeout" {
  type        = number
  default     = 900
  description = "seconds; keep it at or above the coordinator's task timeout"
}

variable "reserved_concurrency" {
  type        = number
  default     = -1
  description = "reserved concurrent executions (-1: unreserved)"
}

variable "redis_url" {
  type        = string
  default     = ""
  sensitive   = true
  description = "optional Redis URL for job cancel flags and LIMIT counters"
}

variable "s3_endpoint" {
  type        = string
  default     = ""
  description = "S3-compatible endpoint; empty for AWS S3"
}

variable "log_level" {
  type    = string
  default = "warn"
}

variable "enable_logs" {
  type        = bool
  default     = true
  description = "let the function write its own CloudWatch log group"
}

variable "log_retention_days" {
  type    = number
  default = 14
}
