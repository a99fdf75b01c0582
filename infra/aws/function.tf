# The function on Lambda (provided.al2023, the bootstrap of make
# function) in the private subnets, so it reaches Redis; S3 through the
# gateway endpoint.

locals {
  jobs_arn   = "${local.bucket_arn}/jobs/*"
  table_arns = [for p in var.table_prefixes : "${local.bucket_arn}/${p}*"]
  # Where statements write: CREATE TABLE AS under tables/, COPY TO and
  # INSERT INTO at their targets.
  write_arns = [for p in var.write_prefixes : "${local.bucket_arn}/${p}*"]
  # What is read: tables, what statements wrote (a CTAS table, a COPY
  # target read back as an external table) and jobs' objects.
  read_arns = distinct(concat(local.table_arns, local.write_arns, [local.jobs_arn]))
}

data "aws_iam_policy_document" "lambda_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "function" {
  name               = "${var.name}-function"
  assume_role_policy = data.aws_iam_policy_document.lambda_assume.json
}

data "aws_iam_policy_document" "function" {
  # Tables are read by range (footers, row groups) and stat'ed (size,
  # etag); shuffle inputs, manifests and TaskSpecs passed by reference
  # are read under jobs/, and tables written by statements under the
  # write prefixes. GetObject covers GET and HEAD.
  statement {
    sid       = "ReadTablesAndJobs"
    actions   = ["s3:GetObject"]
    resources = local.read_arns
  }
  # Shuffle outputs and their manifests are written under jobs/; the
  # files of CREATE TABLE AS, COPY TO and INSERT INTO under the write
  # prefixes only. Large outputs are multipart uploads, which PutObject
  # covers, and a failed one is aborted.
  statement {
    sid       = "WriteJobsAndTables"
    actions   = ["s3:PutObject", "s3:AbortMultipartUpload"]
    resources = concat([local.jobs_arn], local.write_arns)
  }
  # The function never lists, but without ListBucket S3 answers a missing
  # object with 403 instead of 404, and the function stats its output
  # manifest to find an attempt that already committed. It shows key
  # names, not contents.
  statement {
    sid       = "MissingObjectsAre404"
    actions   = ["s3:ListBucket"]
    resources = [local.bucket_arn]
  }
  # Lambda's network interfaces in the VPC (what the managed
  # AWSLambdaVPCAccessExecutionRole grants); EC2 allows no narrower
  # resource for these.
  statement {
    sid = "VpcNetworkInterfaces"
    actions = ["ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DeleteNetworkInterface",
    "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"]
    resources = ["*"]
  }
  # Its own log group only (created below, so no CreateLogGroup).
  statement {
    sid       = "Logs"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.function.arn}:*"]
  }
}

resource "aws_iam_role_policy" "function" {
  name   = "${var.name}-function"
  role   = aws_iam_role.function.id
  policy = data.aws_iam_policy_document.function.json
}

resource "aws_cloudwatch_log_group" "function" {
  name              = "/aws/lambda/${var.name}-function"
  retention_in_days = 14
}

resource "aws_lambda_function" "function" {
  function_name    = "${var.name}-function"
  description      = "sluice task runtime (TaskSpec in, TaskResult out)"
  role             = aws_iam_role.function.arn
  runtime          = "provided.al2023"
  handler          = "bootstrap"
  architectures    = [var.function_arch]
  filename         = var.function_package
  source_code_hash = filebase64sha256(var.function_package)
  memory_size      = var.function_memory_mb
  timeout          = 900
  # Each coordinator runs at most var.functions at once.
  reserved_concurrent_executions = var.coordinators * var.functions
  vpc_config {
    subnet_ids         = aws_subnet.private[*].id
    security_group_ids = [aws_security_group.function.id]
  }
  environment {
    variables = {
      SLUICE_S3_ENDPOINT = local.s3_endpoint
      SLUICE_S3_BUCKET   = var.bucket
      SLUICE_REDIS_URL   = local.redis_url
      SLUICE_LOG_LEVEL   = "warn"
    }
  }
  depends_on = [aws_iam_role_policy.function, aws_cloudwatch_log_group.function]
}
