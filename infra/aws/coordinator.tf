# The coordinators on ECS Fargate behind an application load balancer
# with TLS. They are stateless (jobs live in Redis and the bucket), so
# any replica drives any job and a rolling update keeps jobs running.

resource "aws_secretsmanager_secret" "token" {
  name_prefix = "${var.name}-token-"
}

resource "aws_secretsmanager_secret_version" "token" {
  secret_id     = aws_secretsmanager_secret.token.id
  secret_string = var.token
}

resource "aws_secretsmanager_secret" "redis_url" {
  name_prefix = "${var.name}-redis-url-"
}

resource "aws_secretsmanager_secret_version" "redis_url" {
  secret_id     = aws_secretsmanager_secret.redis_url.id
  secret_string = local.redis_url
}

data "aws_iam_policy_document" "ecs_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["ecs-tasks.amazonaws.com"]
    }
  }
}

# The execution role: what ECS needs to start the task.
resource "aws_iam_role" "coordinator_execution" {
  name               = "${var.name}-coordinator-execution"
  assume_role_policy = data.aws_iam_policy_document.ecs_assume.json
}

data "aws_iam_policy_document" "coordinator_execution" {
  # Pull the image from ECR: the token call allows no narrower resource.
  statement {
    sid       = "EcrToken"
    actions   = ["ecr:GetAuthorizationToken"]
    resources = ["*"]
  }
  statement {
    sid       = "EcrPull"
    actions   = ["ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage"]
    resources = ["arn:${data.aws_partition.current.partition}:ecr:${var.region}:*:repository/*"]
  }
  # The two secrets injected as SLUICE_TOKEN and SLUICE_REDIS_URL.
  statement {
    sid       = "Secrets"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [aws_secretsmanager_secret.token.arn, aws_secretsmanager_secret.redis_url.arn]
  }
  # The container's logs, to its own log group.
  statement {
    sid       = "Logs"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.coordinator.arn}:*"]
  }
}

resource "aws_iam_role_policy" "coordinator_execution" {
  name   = "${var.name}-coordinator-execution"
  role   = aws_iam_role.coordinator_execution.id
  policy = data.aws_iam_policy_document.coordinator_execution.json
}

# The task role: what sluice coordinator serve itself does.
resource "aws_iam_role" "coordinator" {
  name               = "${var.name}-coordinator"
  assume_role_policy = data.aws_iam_policy_document.ecs_assume.json
}

data "aws_iam_policy_document" "coordinator" {
  # Run tasks: invoke this one function, nothing else.
  statement {
    sid       = "InvokeTheFunction"
    actions   = ["lambda:InvokeFunction"]
    resources = [aws_lambda_function.function.arn]
  }
  # List a stage's or a job's objects (adaptive statistics, GC), a
  # table's files (registering a table), the /readyz probe, and the
  # bucket-exists check at start (HEAD bucket).
  statement {
    sid       = "ListBucket"
    actions   = ["s3:ListBucket"]
    resources = [local.bucket_arn]
  }
  # Read table footers and files (planning, registering; a CTAS table
  # once written) and a job's manifests and results under jobs/.
  statement {
    sid       = "ReadTablesAndJobs"
    actions   = ["s3:GetObject"]
    resources = local.read_arns
  }
  # Under jobs/: write TaskSpecs passed by reference, delete a finished
  # job's objects (GC) and abort a failed multipart upload. Under the
  # write prefixes: the commit marker of CREATE TABLE AS, COPY TO and
  # INSERT INTO (and the one empty file of an empty result), and the old
  # objects COPY ... (OVERWRITE) replaces.
  statement {
    sid       = "WriteAndCollectJobsAndTables"
    actions   = ["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"]
    resources = concat([local.jobs_arn], local.write_arns)
  }
}

resource "aws_iam_role_policy" "coordinator" {
  name   = "${var.name}-coordinator"
  role   = aws_iam_role.coordinator.id
  policy = data.aws_iam_policy_document.coordinator.json
}

resource "aws_cloudwatch_log_group" "coordinator" {
  name              = "/ecs/${var.name}-coordinator"
  retention_in_days = 14
}

resource "aws_ecs_cluster" "main" {
  name = var.name
}

resource "aws_ecs_task_definition" "coordinator" {
  family                   = "${var.name}-coordinator"
  requires_compatibilities = ["FARGATE"]
  network_mode             = "awsvpc"
  cpu                      = 1024
  memory                   = 2048
  execution_role_arn       = aws_iam_role.coordinator_execution.arn
  task_role_arn            = aws_iam_role.coordinator.arn
  runtime_platform {
    operating_system_family = "LINUX"
    cpu_architecture        = "X86_64"
  }
  container_definitions = jsonencode([{
    name      = "coordinator"
    image     = var.coordinator_image
    essential = true
    # The image's entrypoint is /sluice and its default command
    # coordinator serve; these flags have no environment variable.
    command = ["coordinator", "serve", "--lambda-function", aws_lambda_function.function.function_name,
    "--functions", tostring(var.functions), "--function-memory", "${var.function_memory_mb}MiB"]
    portMappings = [{ containerPort = local.api_port, protocol = "tcp" }]
    environment = [
      { name = "SLUICE_COORDINATOR_ADDR", value = "0.0.0.0:${local.api_port}" },
      { name = "SLUICE_S3_ENDPOINT", value = local.s3_endpoint },
      { name = "SLUICE_S3_BUCKET", value = var.bucket },
      { name = "AWS_REGION", value = var.region },
      { name = "SLUICE_RETENTION", value = var.retention },
      { name = "SLUICE_PRICES", value = var.prices },
      { name = "SLUICE_LOG_LEVEL", value = "info" },
    ]
    secrets = [
      { name = "SLUICE_TOKEN", valueFrom = aws_secretsmanager_secret.token.arn },
      { name = "SLUICE_REDIS_URL", valueFrom = aws_secretsmanager_secret.redis_url.arn },
    ]
    logConfiguration = {
      logDriver = "awslogs"
      options = {
        awslogs-group         = aws_cloudwatch_log_group.coordinator.name
        awslogs-region        = var.region
        awslogs-stream-prefix = "coordinator"
      }
    }
  }])
}

resource "aws_lb" "api" {
  name               = "${var.name}-api"
  load_balancer_type = "application"
  security_groups    = [aws_security_group.alb.id]
  subnets            = aws_subnet.public[*].id
  # Result downloads and long polls outlast the 60 s default.
  idle_timeout = 900
}

resource "aws_lb_target_group" "api" {
  name        = "${var.name}-api"
  port        = local.api_port
  protocol    = "HTTP"
  target_type = "ip"
  vpc_id      = aws_vpc.main.id
  health_check {
    path                = "/readyz"
    matcher             = "200"
    interval            = 10
    timeout             = 5
    healthy_threshold   = 2
    unhealthy_threshold = 3
  }
  # A replica being replaced finishes its answers; its jobs move to the
  # others after the lease (--lease).
  deregistration_delay = 30
}

resource "aws_lb_listener" "https" {
  load_balancer_arn = aws_lb.api.arn
  port              = 443
  protocol          = "HTTPS"
  ssl_policy        = "ELBSecurityPolicy-TLS13-1-2-2021-06"
  certificate_arn   = var.certificate_arn
  default_action {
    type             = "forward"
    target_group_arn = aws_lb_target_group.api.arn
  }
}

resource "aws_ecs_service" "coordinator" {
  name            = "${var.name}-coordinator"
  cluster         = aws_ecs_cluster.main.id
  task_definition = aws_ecs_task_definition.coordinator.arn
  desired_count   = var.coordinators
  launch_type     = "FARGATE"
  # Rolling update: new replicas join before old ones leave.
  deployment_minimum_healthy_percent = 100
  deployment_maximum_percent         = 200
  network_configuration {
    subnets          = aws_subnet.public[*].id
    security_groups  = [aws_security_group.coordinator.id]
    assign_public_ip = true
  }
  load_balancer {
    target_group_arn = aws_lb_target_group.api.arn
    container_name   = "coordinator"
    container_port   = local.api_port
  }
  depends_on = [aws_lb_listener.https]
}
