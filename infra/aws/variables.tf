# sluice on AWS: the variables of this Terraform root module. Rendered by
# `sluice deploy aws` (defaults below come from its flags); the secrets
# (token) come from TF_VAR_token, never from a file.

variable "name" {
  description = "Prefix of every resource name."
  type        = string
  default     = "sluice"
}

variable "region" {
  description = "AWS region."
  type        = string
  default     = "us-east-1"
}

variable "bucket" {
  description = "S3 bucket of sluice's objects: tables under table_prefixes, job objects under jobs/."
  type        = string
  default     = "sluice-data"
}

variable "table_prefixes" {
  description = "Key prefixes of the tables in the bucket (each ending in /): the function may read only these and jobs/."
  type        = list(string)
  default     = ["tables/"]
}

variable "write_prefixes" {
  description = "Key prefixes statements may write (each ending in /): CREATE TABLE AS writes its tables under tables/, COPY TO and INSERT INTO only at targets under one of these (elsewhere S3 denies the PUT). The function and the coordinator may write only these and jobs/."
  type        = list(string)
  default     = ["tables/", "exports/"]
}

variable "coordinator_image" {
  description = "Coordinator image (make images; push it to ECR), e.g. ACCOUNT.dkr.ecr.REGION.amazonaws.com/sluice-coordinator:TAG."
  type        = string
}

variable "coordinators" {
  description = "Coordinator replicas (ECS tasks); any replica drives any job."
  type        = number
  default     = 2
}

variable "function_package" {
  description = "The function's Lambda package (make function builds bin/lambda/<arm64|amd64>/function.zip), relative to this folder (sluice deploy aws writes the path from its --out)."
  type        = string
  default     = "../../bin/lambda/arm64/function.zip"
}

variable "function_arch" {
  description = "Lambda architecture of the function: arm64 or x86_64."
  type        = string
  default     = "arm64"
  validation {
    condition     = contains(["arm64", "x86_64"], var.function_arch)
    error_message = "function_arch must be arm64 or x86_64."
  }
}

variable "function_memory_mb" {
  description = "Memory of one function in MB (the coordinator's --function-memory: tasks are sized to it)."
  type        = number
  default     = 2048
}

variable "functions" {
  description = "Concurrent functions per coordinator (--functions); reserved concurrency is coordinators * functions."
  type        = number
  default     = 100
}

variable "token" {
  description = "Bearer token of the coordinator API (TF_VAR_token); stored in Secrets Manager."
  type        = string
  sensitive   = true
}

variable "certificate_arn" {
  description = "ACM certificate of the load balancer's HTTPS listener."
  type        = string
}

variable "allowed_cidrs" {
  description = "Networks allowed to reach the API's HTTPS listener."
  type        = list(string)
  default     = ["0.0.0.0/0"]
}

variable "prices" {
  description = "Price table of the cost report (--prices; empty: AWS list prices)."
  type        = string
  default     = ""
}

variable "retention" {
  description = "A finished job's objects are deleted this long after it finished (--retention)."
  type        = string
  default     = "24h"
}

variable "lifecycle_days" {
  description = "The bucket rule expires jobs/ objects after this many days: the backstop when no coordinator ran GC."
  type        = number
  default     = 7
}

variable "vpc_cidr" {
  description = "Address range of the VPC."
  type        = string
  default     = "10.42.0.0/16"
}

variable "redis_node_type" {
  description = "ElastiCache node type."
  type        = string
  default     = "cache.t4g.small"
}
