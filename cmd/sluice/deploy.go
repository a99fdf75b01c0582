package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/urfave/cli/v2"
)

// The values every deployment of the function shares; infra/ templates
// state the same (their test checks them against the code).
const (
	lambdaRuntime = "provided.al2023"
	lambdaHandler = "bootstrap"
)

func deployCommand() *cli.Command {
	return &cli.Command{
		Name:  "deploy",
		Usage: "deploy sluice: the function to Lambda, or the whole system to AWS (Terraform) or Kubernetes (kustomize)",
		Subcommands: []*cli.Command{{
			Name:  "lambda",
			Usage: "create or update the function on AWS Lambda (provided.al2023, the bootstrap built by make function)",
			Description: "Creates the function when it does not exist, else updates its code and configuration.\n" +
				"--dry-run prints the Lambda API calls it would make, without any network access.\n" +
				"The role must exist (infra/terraform or infra/sam create one limited to the bucket prefix).",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "name", Required: true, Usage: "function name"},
				&cli.StringFlag{Name: "role", Required: true, Usage: "ARN of the function's execution role"},
				&cli.StringFlag{Name: "bucket", Required: true, Usage: "S3 bucket of sluice's objects (SLUICE_S3_BUCKET of the function)"},
				&cli.StringFlag{Name: "zip", Usage: "function.zip or bare bootstrap to deploy (default bin/lambda/<arch>/function.zip, else .../bootstrap)"},
				&cli.StringFlag{Name: "arch", Value: "arm64", Usage: "arm64 or amd64 (x86_64)"},
				&cli.IntFlag{Name: "memory", Value: 2048, Usage: "memory in MB"},
				&cli.DurationFlag{Name: "timeout", Value: 15 * time.Minute, Usage: "function timeout (at most 15m)"},
				&cli.StringFlag{Name: "s3-endpoint", Usage: "S3-compatible endpoint for the function (empty: AWS S3)"},
				&cli.StringFlag{Name: "redis", Usage: "Redis URL for job cancel flags and LIMIT counters (optional)"},
				&cli.StringFlag{Name: "function-log-level", Value: "warn", Usage: "SLUICE_LOG_LEVEL of the function"},
				&cli.StringSliceFlag{Name: "env", Usage: "extra environment variable KEY=VALUE (repeatable)"},
				&cli.StringFlag{Name: "region", EnvVars: []string{"AWS_REGION"}, Usage: "AWS region"},
				&cli.StringFlag{Name: "endpoint", Usage: "Lambda API endpoint instead of AWS (e.g. LocalStack)"},
				&cli.BoolFlag{Name: "dry-run", Usage: "print the calls without making them"},
			},
			Action: deployLambda,
		}, platformDeployCommand("aws"), platformDeployCommand("k8s")},
	}
}

// lambdaDeployment is what deploy lambda sends.
type lambdaDeployment struct {
	Name, Role, Arch  string
	Memory            int32
	Timeout           int32
	Env               map[string]string
	Zip               []byte
	ZipPath, ZipSHA   string
	ZipFromBootstrap  bool
	BootstrapUnzipped int
}

func deployLambda(c *cli.Context) error {
	d, err := lambdaDeploymentFrom(c)
	if err != nil {
		return err
	}
	create := &lambda.CreateFunctionInput{
		FunctionName:  aws.String(d.Name),
		Role:          aws.String(d.Role),
		Runtime:       types.Runtime(lambdaRuntime),
		Handler:       aws.String(lambdaHandler),
		Architectures: []types.Architecture{types.Architecture(d.Arch)},
		Code:          &types.FunctionCode{ZipFile: d.Zip},
		MemorySize:    aws.Int32(d.Memory),
		Timeout:       aws.Int32(d.Timeout),
		Environment:   &types.Environment{Variables: d.Env},
		Description:   aws.String("sluice task runtime (TaskSpec in, TaskResult out)"),
	}
	updateCode := &lambda.UpdateFunctionCodeInput{
		FunctionName:  aws.String(d.Name),
		ZipFile:       d.Zip,
		Architectures: []types.Architecture{types.Architecture(d.Arch)},
	}
	updateConfig := &lambda.UpdateFunctionConfigurationInput{
		FunctionName: aws.String(d.Name),
		Role:         aws.String(d.Role),
		Runtime:      types.Runtime(lambdaRuntime),
		Handler:      aws.String(lambdaHandler),
		MemorySize:   aws.Int32(d.Memory),
		Timeout:      aws.Int32(d.Timeout),
		Environment:  &types.Environment{Variables: d.Env},
	}
	if c.Bool("dry-run") {
		w := c.App.Writer
		source := d.ZipPath
		if d.ZipFromBootstrap {
			source += fmt.Sprintf(" (bootstrap of %d bytes, zipped)", d.BootstrapUnzipped)
		}
		fmt.Fprintf(w, "# dry run: no request is made\n# package: %s, %d bytes, sha256 %s\n", source, len(d.Zip), d.ZipSHA)
		printCall(w, "GetFunction", map[string]any{"FunctionName": d.Name})
		fmt.Fprintln(w, "# if the function does not exist:")
		printCall(w, "CreateFunction", create)
		printCall(w, "wait FunctionActiveV2", map[string]any{"FunctionName": d.Name})
		fmt.Fprintln(w, "# if it exists:")
		printCall(w, "UpdateFunctionCode", updateCode)
		printCall(w, "wait FunctionUpdatedV2", map[string]any{"FunctionName": d.Name})
		printCall(w, "UpdateFunctionConfiguration", updateConfig)
		printCall(w, "wait FunctionUpdatedV2", map[string]any{"FunctionName": d.Name})
		return nil
	}

	var opts []func(*config.LoadOptions) error
	if r := c.String("region"); r != "" {
		opts = append(opts, config.WithRegion(r))
	}
	awsCfg, err := config.LoadDefaultConfig(c.Context, opts...)
	if err != nil {
		return fmt.Errorf("AWS config: %w", err)
	}
	if awsCfg.Region == "" {
		return errors.New("no AWS region: set --region or AWS_REGION")
	}
	client := lambda.NewFromConfig(awsCfg, func(o *lambda.Options) {
		if e := c.String("endpoint"); e != "" {
			o.BaseEndpoint = aws.String(httpEndpoint(e))
		}
	})
	ctx := c.Context
	const wait = 5 * time.Minute
	_, err = client.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(d.Name)})
	var nf *types.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		out, err := client.CreateFunction(ctx, create)
		if err != nil {
			return fmt.Errorf("create function %s: %w", d.Name, err)
		}
		if err := lambda.NewFunctionActiveV2Waiter(client).Wait(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(d.Name)}, wait); err != nil {
			return fmt.Errorf("function %s did not become active: %w", d.Name, err)
		}
		fmt.Fprintf(c.App.Writer, "created %s (%s)\n", aws.ToString(out.FunctionArn), d.Arch)
	case err != nil:
		return fmt.Errorf("get function %s: %w", d.Name, err)
	default:
		if _, err := client.UpdateFunctionCode(ctx, updateCode); err != nil {
			return fmt.Errorf("update code of %s: %w", d.Name, err)
		}
		if err := waitUpdated(ctx, client, d.Name, wait); err != nil {
			return err
		}
		out, err := client.UpdateFunctionConfiguration(ctx, updateConfig)
		if err != nil {
			return fmt.Errorf("update configuration of %s: %w", d.Name, err)
		}
		if err := waitUpdated(ctx, client, d.Name, wait); err != nil {
			return err
		}
		fmt.Fprintf(c.App.Writer, "updated %s (%s)\n", aws.ToString(out.FunctionArn), d.Arch)
	}
	return nil
}

func waitUpdated(ctx context.Context, client *lambda.Client, name string, d time.Duration) error {
	err := lambda.NewFunctionUpdatedV2Waiter(client).Wait(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(name)}, d)
	if err != nil {
		return fmt.Errorf("function %s update did not finish: %w", name, err)
	}
	return nil
}

func lambdaDeploymentFrom(c *cli.Context) (*lambdaDeployment, error) {
	d := &lambdaDeployment{Name: c.String("name"), Role: c.String("role"), Memory: int32(c.Int("memory"))}
	switch a := c.String("arch"); a {
	case "arm64":
		d.Arch = "arm64"
	case "amd64", "x86_64":
		d.Arch = "x86_64"
	default:
		return nil, fmt.Errorf("--arch %q: want arm64 or amd64", a)
	}
	if !strings.HasPrefix(d.Role, "arn:") {
		return nil, fmt.Errorf("--role %q: want an IAM role ARN (arn:aws:iam::ACCOUNT:role/NAME)", d.Role)
	}
	to := c.Duration("timeout")
	if to < time.Second || to > 15*time.Minute {
		return nil, fmt.Errorf("--timeout %s: Lambda allows 1s to 15m", to)
	}
	d.Timeout = int32(to / time.Second)
	if d.Memory < 128 || d.Memory > 10240 {
		return nil, fmt.Errorf("--memory %d: Lambda allows 128 to 10240 MB", d.Memory)
	}
	d.Env = map[string]string{"SLUICE_S3_BUCKET": c.String("bucket"), "SLUICE_LOG_LEVEL": c.String("function-log-level")}
	if e := c.String("s3-endpoint"); e != "" {
		d.Env["SLUICE_S3_ENDPOINT"] = e
	}
	if r := c.String("redis"); r != "" {
		d.Env["SLUICE_REDIS_URL"] = r
	}
	for _, kv := range c.StringSlice("env") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--env %q: want KEY=VALUE", kv)
		}
		if strings.HasPrefix(k, "AWS_") || k == "_HANDLER" || k == "LAMBDA_TASK_ROOT" {
			return nil, fmt.Errorf("--env %s: Lambda reserves this variable", k)
		}
		d.Env[k] = v
	}
	path := c.String("zip")
	if path == "" {
		dir := "amd64"
		if d.Arch == "arm64" {
			dir = "arm64"
		}
		path = filepath.Join("bin", "lambda", dir, "function.zip")
		if _, err := os.Stat(path); err != nil {
			path = filepath.Join("bin", "lambda", dir, "bootstrap")
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("function package: %w (build it with make function)", err)
	}
	d.ZipPath = path
	if !bytes.HasPrefix(b, []byte("PK\x03\x04")) {
		// A bare bootstrap binary: check it is a Linux executable for the
		// chosen architecture, and zip it.
		if err := checkBootstrap(b, d.Arch); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		d.BootstrapUnzipped = len(b)
		d.ZipFromBootstrap = true
		if b, err = zipBootstrap(b); err != nil {
			return nil, err
		}
	} else if err := checkZip(b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > 50<<20 {
		return nil, fmt.Errorf("%s: %d bytes is over Lambda's 50 MB direct upload limit", path, len(b))
	}
	d.Zip = b
	sum := sha256.Sum256(b)
	d.ZipSHA = hex.EncodeToString(sum[:])
	return d, nil
}

// checkBootstrap checks an ELF header: 64-bit, the machine of arch.
func checkBootstrap(b []byte, arch string) error {
	if len(b) < 20 || !bytes.HasPrefix(b, []byte("\x7fELF")) {
		return errors.New("neither a zip nor a Linux executable (want function.zip or bootstrap from make function)")
	}
	machine := uint16(b[18]) | uint16(b[19])<<8
	want := map[string]uint16{"x86_64": 62, "arm64": 183}[arch]
	if machine != want {
		return fmt.Errorf("bootstrap is not built for %s (ELF machine %d; host is %s)", arch, machine, runtime.GOARCH)
	}
	return nil
}

// zipBootstrap packs a bootstrap binary as Lambda expects: one executable
// file named bootstrap at the root.
func zipBootstrap(bin []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	h := &zip.FileHeader{Name: lambdaHandler, Method: zip.Deflate}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(bin); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// checkZip checks a function.zip holds an executable bootstrap at its root.
func checkZip(b []byte) error {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return err
	}
	for _, f := range zr.File {
		if f.Name == lambdaHandler {
			if f.Mode()&0o111 == 0 {
				return errors.New("bootstrap in the zip is not executable")
			}
			return nil
		}
	}
	return errors.New("zip has no bootstrap at its root")
}

// printCall prints one API call with its input as JSON: unset fields left
// out, the package bytes replaced by their size.
func printCall(w io.Writer, op string, in any) {
	b, _ := json.Marshal(in)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	prune(m)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(m)
	fmt.Fprintf(w, "lambda:%s %s", op, out.Bytes())
}

func prune(m map[string]any) {
	for k, v := range m {
		switch x := v.(type) {
		case string:
			if k == "ZipFile" {
				if raw, err := base64.StdEncoding.DecodeString(x); err == nil {
					m[k] = fmt.Sprintf("<%d bytes>", len(raw))
				}
			} else if x == "" {
				delete(m, k)
			} else if u, err := url.Parse(x); err == nil && u.User != nil {
				// A URL with a password (SLUICE_REDIS_URL): not on screen.
				u.User = nil
				m[k] = u.Scheme + "://***@" + strings.TrimPrefix(u.String(), u.Scheme+"://")
			}
		case bool:
			if !x {
				delete(m, k)
			}
		case nil:
			delete(m, k)
		case []any:
			if len(x) == 0 {
				delete(m, k)
			}
		case map[string]any:
			prune(x)
			if len(x) == 0 {
				delete(m, k)
			}
		}
	}
}
