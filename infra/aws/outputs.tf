output "api_url" {
  description = "The coordinator API (point a DNS name of the certificate at it): SLUICE_COORDINATOR."
  value       = "https://${aws_lb.api.dns_name}"
}

output "function_name" {
  value = aws_lambda_function.function.function_name
}

output "bucket" {
  value = aws_s3_bucket.data.id
}

output "redis_endpoint" {
  value = aws_elasticache_replication_group.redis.primary_endpoint_address
}

output "ecs_cluster" {
  value = aws_ecs_cluster.main.name
}
