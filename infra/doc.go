// Package infra holds the deployment files of the sluice function: an AWS
// SAM template (sam/template.yaml) and a Terraform module (terraform/) for
// AWS Lambda, a Knative Service (knative/service.yaml) and an OpenFaaS stack
// (openfaas/stack.yml) for the HTTP function, and the HTTP function's
// Dockerfile. Its test parses each of them and checks the values that must
// match the code: handler, runtime, environment variable names, port and
// paths, and the IAM role's scope.
package infra
