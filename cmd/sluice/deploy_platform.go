package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluicedb/sluice/infra"
)

// platformDeployCommand is deploy aws or deploy k8s: render the embedded
// templates of infra/templates/<target> with the flags, then print them
// (--dry-run) or write them to --out and apply them with terraform or
// kubectl.
func platformDeployCommand(target string) *cli.Command {
	d := infra.Defaults(target, infra.Settings{})
	flags := []cli.Flag{
		&cli.StringFlag{Name: "name", Value: d.Name, Usage: "prefix of every resource name"},
		&cli.StringFlag{Name: "bucket", Value: d.Bucket, Usage: "bucket of sluice's objects"},
		&cli.StringSliceFlag{Name: "table-prefix", Value: cli.NewStringSlice(d.TablePrefixes...), Usage: "key prefix of tables in the bucket (repeatable; the function may read only these and jobs/)"},
		&cli.StringFlag{Name: "coordinator-image", Usage: "coordinator image (make images); empty: a parameter of the rendered files"},
		&cli.IntFlag{Name: "coordinators", Value: d.Coordinators, Usage: "coordinator replicas"},
		&cli.IntFlag{Name: "functions", Value: d.Functions, Usage: "concurrent functions per coordinator"},
		bytesFlag("function-memory", int64(d.FunctionMemoryMB)<<20, "memory of one function (whole MiB): the Lambda or container size and the coordinators' --function-memory"),
		&cli.DurationFlag{Name: "retention", Value: d.Retention, Usage: "delete a finished job's objects this long after it finished"},
		&cli.IntFlag{Name: "lifecycle-days", Value: d.LifecycleDays, Usage: "bucket lifecycle rule: expire jobs/ objects after this many days (backstop of GC)"},
		pricesFlag(),
		&cli.StringFlag{Name: "region", Value: d.Region, Usage: "AWS region (of the bucket on Kubernetes)"},
		&cli.StringFlag{Name: "out", Value: filepath.Join(".tmp", "deploy", target), Usage: "folder the rendered files are written to (without --dry-run)"},
		&cli.BoolFlag{Name: "dry-run", Usage: "print the rendered files instead of writing and applying them"},
	}
	var usage, tool, desc string
	switch target {
	case "aws":
		usage = "render and apply the Terraform module for AWS: Lambda function, ECS Fargate coordinators behind HTTPS, ElastiCache, S3"
		tool = "terraform"
		desc = "Writes the module to --out, then runs terraform init and terraform apply there (it asks for\n" +
			"certificate_arn and token unless TF_VAR_certificate_arn and TF_VAR_token are set).\n" +
			"Build the function package first (make function) and push the coordinator image (make images)."
		flags = append(flags,
			&cli.StringFlag{Name: "arch", Value: "arm64", Usage: "Lambda architecture of the function: arm64 or amd64 (x86_64)"},
			&cli.StringSliceFlag{Name: "write-prefix", Value: cli.NewStringSlice(d.WritePrefixes...), Usage: "key prefix statements may write (repeatable): CREATE TABLE AS writes under " + infra.CTASPrefix + ", COPY TO and INSERT INTO only at targets under one of these"},
			&cli.StringFlag{Name: "function-package", Usage: "the function's Lambda package, relative to the current folder (default " + infra.FunctionPackagePath("arm64") + ", or amd64 with --arch amd64); written into the module relative to --out"})
	case "k8s":
		usage = "render and apply the kustomize base for Kubernetes: coordinator Deployment, Redis, Knative function, NetworkPolicies"
		tool = "kubectl"
		desc = "Writes the kustomize base to --out, then runs kubectl apply -k there.\n" +
			"Create the secret \"sluice\" first (docs/deploy.md)."
		flags = append(flags,
			&cli.StringFlag{Name: "namespace", Value: d.Namespace, Usage: "Kubernetes namespace"},
			&cli.StringFlag{Name: "function-image", Usage: "function image (make images); empty: a parameter of the rendered files"},
			&cli.StringFlag{Name: "s3-endpoint", Value: d.S3Endpoint, Usage: "S3-compatible endpoint the pods use"})
	}
	return &cli.Command{
		Name:        target,
		Usage:       usage,
		Description: desc + "\n--dry-run prints every file, each after a line \"# ---- file: PATH\".",
		Flags:       flags,
		Action: func(c *cli.Context) error {
			s, err := platformSettings(c, target)
			if err != nil {
				return err
			}
			files, err := infra.Render(target, s)
			if err != nil {
				return err
			}
			if c.Bool("dry-run") {
				for _, f := range files {
					fmt.Fprintf(c.App.Writer, "# ---- file: %s\n%s", f.Path, f.Data)
				}
				return nil
			}
			bin, err := exec.LookPath(tool)
			if err != nil {
				return fmt.Errorf("deploy %s: %s is not on PATH: install it, or print the files with --dry-run and apply them yourself", target, tool)
			}
			out := c.String("out")
			if err := writeRendered(out, files); err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "wrote %d files to %s\n", len(files), out)
			if target == "aws" {
				if err := runTool(c.Context, bin, "-chdir="+out, "init", "-input=false"); err != nil {
					return err
				}
				return runTool(c.Context, bin, "-chdir="+out, "apply")
			}
			return runTool(c.Context, bin, "apply", "-k", out)
		},
	}
}

// platformSettings reads the flags of deploy aws|k8s.
func platformSettings(c *cli.Context, target string) (infra.Settings, error) {
	mem := bytesValue(c, "function-memory")
	if mem%(1<<20) != 0 {
		return infra.Settings{}, fmt.Errorf("--function-memory %d bytes: want whole MiB", mem)
	}
	s := infra.Settings{
		Name: c.String("name"), Bucket: c.String("bucket"), Region: c.String("region"),
		TablePrefixes:    c.StringSlice("table-prefix"),
		CoordinatorImage: c.String("coordinator-image"),
		Coordinators:     c.Int("coordinators"), Functions: c.Int("functions"),
		FunctionMemoryMB: int(mem >> 20),
		Retention:        c.Duration("retention"), LifecycleDays: c.Int("lifecycle-days"),
		Prices: c.String("prices"),
	}
	if s.Retention <= 0 {
		return s, errors.New("--retention: want a positive duration (the lifecycle rule expires jobs/ objects anyway)")
	}
	if s.Retention > 0 && s.Retention < time.Minute {
		return s, fmt.Errorf("--retention %s: want at least 1m", s.Retention)
	}
	if p := s.Prices; p != "" && !strings.Contains(p, "=") {
		return s, fmt.Errorf("--prices %q: a deployment takes the inline form key=value,... (a file is not in the image)", p)
	}
	switch target {
	case "aws":
		switch a := c.String("arch"); a {
		case "arm64":
			s.FunctionArch = "arm64"
		case "amd64", "x86_64":
			s.FunctionArch = "x86_64"
		default:
			return s, fmt.Errorf("--arch %q: want arm64 or amd64", a)
		}
		s.WritePrefixes = c.StringSlice("write-prefix")
		pkg := c.String("function-package")
		if pkg == "" {
			pkg = infra.FunctionPackagePath(s.FunctionArch)
		}
		rel, err := packageFromOut(pkg, c.String("out"))
		if err != nil {
			return s, err
		}
		s.FunctionPackage = rel
	case "k8s":
		s.Namespace = c.String("namespace")
		s.FunctionImage = c.String("function-image")
		s.S3Endpoint = c.String("s3-endpoint")
	}
	return s, nil
}

// packageFromOut is the path of pkg (relative to the current folder, or
// absolute) as Terraform reads it from the module written to out: with
// -chdir=out, relative paths start there.
func packageFromOut(pkg, out string) (string, error) {
	if filepath.IsAbs(pkg) {
		return filepath.ToSlash(pkg), nil
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	absPkg, err := filepath.Abs(pkg)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(absOut, absPkg)
	if err != nil {
		return "", fmt.Errorf("--function-package %s from --out %s: %w", pkg, out, err)
	}
	return filepath.ToSlash(rel), nil
}

func writeRendered(dir string, files []infra.File) error {
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func runTool(ctx context.Context, bin string, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", filepath.Base(bin), strings.Join(args, " "), err)
	}
	return nil
}
