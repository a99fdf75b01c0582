# sluice on AWS: the coordinator on ECS Fargate behind an HTTPS load
# balancer, the function on Lambda in the same VPC, ElastiCache Redis
# (AUTH and TLS) and the S3 bucket. Apply:
#
#   make function images   # then push the coordinator image to ECR
#   export TF_VAR_token=$(openssl rand -hex 32)
#   terraform init && terraform apply -var certificate_arn=arn:aws:acm:...
#
# docs/deploy.md walks through it.

terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.40"
    }
    random = {
      source  = "hashicorp/random"
      version = ">= 3.5"
    }
  }
}

provider "aws" {
  region = var.region
}

data "aws_partition" "current" {}

data "aws_availability_zones" "available" {
  state = "available"
}

locals {
  azs = slice(data.aws_availability_zones.available.names, 0, 2)
  # The coordinator's API port (sluice coordinator serve, SLUICE_COORDINATOR_ADDR).
  api_port   = 7070
  redis_port = 6379
  bucket_arn = "arn:${data.aws_partition.current.partition}:s3:::${var.bucket}"
  # The regional S3 endpoint (the coordinator requires one; the gateway
  # endpoint of the VPC serves it).
  s3_endpoint = "https://s3.${var.region}.amazonaws.com"
}

# ---- network ----------------------------------------------------------
# Public subnets hold the load balancer and the coordinators (a public IP
# lets them pull the image and call the Lambda API without a NAT gateway);
# private subnets hold the functions and Redis. Functions reach S3 through
# the gateway endpoint and Redis inside the VPC; they need nothing else.

resource "aws_vpc" "main" {
  cidr_block           = var.vpc_cidr
  enable_dns_support   = true
  enable_dns_hostnames = true
  tags                 = { Name = var.name }
}

resource "aws_internet_gateway" "main" {
  vpc_id = aws_vpc.main.id
}

resource "aws_subnet" "public" {
  count                   = 2
  vpc_id                  = aws_vpc.main.id
  cidr_block              = cidrsubnet(var.vpc_cidr, 8, count.index)
  availability_zone       = local.azs[count.index]
  map_public_ip_on_launch = true
  tags                    = { Name = "${var.name}-public-${count.index}" }
}

resource "aws_subnet" "private" {
  count             = 2
  vpc_id            = aws_vpc.main.id
  cidr_block        = cidrsubnet(var.vpc_cidr, 8, 10 + count.index)
  availability_zone = local.azs[count.index]
  tags              = { Name = "${var.name}-private-${count.index}" }
}

resource "aws_route_table" "public" {
  vpc_id = aws_vpc.main.id
  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.main.id
  }
}

resource "aws_route_table" "private" {
  vpc_id = aws_vpc.main.id
}

resource "aws_route_table_association" "public" {
  count          = 2
  subnet_id      = aws_subnet.public[count.index].id
  route_table_id = aws_route_table.public.id
}

resource "aws_route_table_association" "private" {
  count          = 2
  subnet_id      = aws_subnet.private[count.index].id
  route_table_id = aws_route_table.private.id
}

resource "aws_vpc_endpoint" "s3" {
  vpc_id            = aws_vpc.main.id
  service_name      = "com.amazonaws.${var.region}.s3"
  vpc_endpoint_type = "Gateway"
  route_table_ids   = [aws_route_table.private.id, aws_route_table.public.id]
}

resource "aws_security_group" "alb" {
  name        = "${var.name}-alb"
  description = "HTTPS from the allowed networks to the load balancer"
  vpc_id      = aws_vpc.main.id
  ingress {
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = var.allowed_cidrs
  }
  egress {
    from_port   = local.api_port
    to_port     = local.api_port
    protocol    = "tcp"
    cidr_blocks = [var.vpc_cidr]
  }
}

resource "aws_security_group" "coordinator" {
  name        = "${var.name}-coordinator"
  description = "The API port from the load balancer only; out: Redis, S3, the Lambda API, ECR, Secrets Manager"
  vpc_id      = aws_vpc.main.id
  ingress {
    from_port       = local.api_port
    to_port         = local.api_port
    protocol        = "tcp"
    security_groups = [aws_security_group.alb.id]
  }
  egress {
    from_port   = 0
    to_port     = 0
    protocol    = "-1"
    cidr_blocks = ["0.0.0.0/0"]
  }
}

resource "aws_security_group" "function" {
  name        = "${var.name}-function"
  description = "Functions take no inbound traffic; out: Redis and S3 (gateway endpoint) only"
  vpc_id      = aws_vpc.main.id
  egress {
    from_port   = local.redis_port
    to_port     = local.redis_port
    protocol    = "tcp"
    cidr_blocks = [var.vpc_cidr]
  }
  egress {
    from_port       = 443
    to_port         = 443
    protocol        = "tcp"
    prefix_list_ids = [aws_vpc_endpoint.s3.prefix_list_id]
  }
}

resource "aws_security_group" "redis" {
  name        = "${var.name}-redis"
  description = "Redis from the coordinators and the functions only"
  vpc_id      = aws_vpc.main.id
  ingress {
    from_port       = local.redis_port
    to_port         = local.redis_port
    protocol        = "tcp"
    security_groups = [aws_security_group.coordinator.id, aws_security_group.function.id]
  }
}
