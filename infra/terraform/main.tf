# Terraform module: the sluice function on AWS Lambda (provided.al2023,
# handler bootstrap) and its role. The role may read, write, delete and list
# objects under the bucket prefix and nothing else in S3; with enable_logs it
# may also write its own CloudWatch log group.
#
#   make function
#   module "sluice" {
#     source       = "./infra/terraform"
#     bucket       = "my-bucket"
#     prefix       = "sluice"
#     zip_path     = "${path.root}/bin/lambda/arm64/function.zip"
#     architecture = "arm64"
#   }
#
# Then: sluice coordinator serve --lambda-function <function_name output> --lambda-region <region> ...

terraform {
  required_version = ">= 1.3"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0"
    }
  }
}

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  prefix     = trim(var.prefix, "/")
  key_prefix = local.prefix == "" ? "" : "${local.prefix}/"
  bucket_arn = "arn:${data.aws_partition.current.partition}:s3:::${var.bucket}"
  log_group  = "/aws/lambda/${var.function_name}"
  # Environment variables read by cmd/sluice-function (AWS_REGION and the
  # role's credentials are Lambda's own; SLUICE_S3_ENDPOINT stays unset for
  # AWS S3).
  environment = merge(
    {
      SLUICE_S3_BUCKET = var.bucket
      SLUICE_LOG_LEVEL = var.log_level
    },
    var.redis_url == "" ? {} : { SLUICE_REDIS_URL = var.redis_url },
    var.s3_endpoint == "" ? {} : { SLUICE_S3_ENDPOINT = var.s3_endpoint },
  )
}

data "aws_iam_policy_document" "assume" {
  statement {
    effect  = "Allow"
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "function" {
  name               = "${var.function_name}-role"
  assume_role_policy = data.aws_iam_policy_document.assume.json
}

data "aws_iam_policy_document" "bucket_prefix" {
  statement {
    sid       = "Objects"
    effect    = "Allow"
    actions   = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"]
    resources = ["${local.bucket_arn}/${local.key_prefix}*"]
  }
  statement {
    sid       = "List"
    effect    = "Allow"
    actions   = ["s3:ListBucket"]
    resources = [local.bucket_arn]
    condition {
      test     = "StringLike"
      variable = "s3:prefix"
      values   = ["${local.key_prefix}*"]
    }
  }
}

resource "aws_iam_role_policy" "bucket_prefix" {
  name   = "sluice-bucket-prefix"
  role   = aws_iam_role.function.id
  policy = data.aws_iam_policy_document.bucket_prefix.json
}

data "aws_iam_policy_document" "logs" {
  statement {
    sid       = "Logs"
    effect    = "Allow"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["arn:${data.aws_partition.current.partition}:logs:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:log-group:${local.log_group}:*"]
  }
}

resource "aws_iam_role_policy" "logs" {
  count  = var.enable_logs ? 1 : 0
  name   = "own-log-group"
  role   = aws_iam_role.function.id
  policy = data.aws_iam_policy_document.logs.json
}

resource "aws_cloudwatch_log_group" "function" {
  count             = var.enable_logs ? 1 : 0
  name              = local.log_group
  retention_in_days = var.log_retention_days
}

resource "aws_lambda_function" "function" {
  function_name    = var.function_name
  description      = "sluice task runtime (TaskSpec in, TaskResult out)"
  role             = aws_iam_role.function.arn
  runtime          = "provided.al2023"
  handler          = "bootstrap"
  architectures    = [var.architecture]
  filename         = var.zip_path
  source_code_hash = filebase64sha256(var.zip_path)
  memory_size      = var.memory_size
  timeout          = var.timeout

  reserved_concurrent_executions = var.reserved_concurrency

  environment {
    variables = local.environment
  }

  depends_on = [aws_iam_role_policy.bucket_prefix, aws_cloudwatch_log_group.function]
}
