package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"
)

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	app := &cli.App{Name: "sluice", Commands: []*cli.Command{deployCommand()}, Writer: &out, ErrWriter: &out,
		ExitErrHandler: func(*cli.Context, error) {}}
	err := app.RunContext(context.Background(), append([]string{"sluice"}, args...))
	return out.String(), err
}

// splitDryRun splits deploy aws|k8s --dry-run output into its files.
func splitDryRun(t *testing.T, out string) map[string]string {
	t.Helper()
	files := map[string]string{}
	parts := strings.Split(out, "# ---- file: ")
	if parts[0] != "" {
		t.Fatalf("output does not start with a file header: %q", parts[0])
	}
	for _, p := range parts[1:] {
		name, body, _ := strings.Cut(p, "\n")
		files[name] = body
	}
	return files
}

// TestDeployPlatformDryRun: with default flags, --dry-run prints exactly
// the checked-in infra/aws and infra/k8s (so what the docs and tests look
// at is what users get), and flags reach the rendering. infra/aws is the
// module as written to --out infra/aws from the repository root (this
// test runs in cmd/sluice).
func TestDeployPlatformDryRun(t *testing.T) {
	for _, target := range []string{"aws", "k8s"} {
		args := []string{"deploy", target, "--dry-run"}
		if target == "aws" {
			args = append(args, "--out", "../../infra/aws", "--function-package", "../../bin/lambda/arm64/function.zip")
		}
		out, err := runCLI(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		files := splitDryRun(t, out)
		onDisk, _ := filepath.Glob(filepath.Join("..", "..", "infra", target, "*"))
		if len(files) != len(onDisk) || len(files) == 0 {
			t.Errorf("%s: dry run prints %d files, infra/%s holds %d", target, len(files), target, len(onDisk))
		}
		for name, body := range files {
			b, err := os.ReadFile(filepath.Join("..", "..", "infra", target, name))
			if err != nil {
				t.Errorf("%s: %v", target, err)
				continue
			}
			if string(b) != body {
				t.Errorf("infra/%s/%s differs from deploy %s --dry-run (go test ./infra/ -run TestRenderedFilesMatch -update)", target, name, target)
			}
		}
	}

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"deploy", "aws", "--dry-run", "--arch", "amd64", "--function-memory", "4GiB", "--coordinators", "3", "--name", "prod",
			"--coordinator-image", "1.dkr.ecr.us-east-1.amazonaws.com/c:v1", "--retention", "2h", "--table-prefix", "warehouse/"},
			[]string{`default     = "x86_64"`, `default     = 4096`, `default     = 3`, `default     = "prod"`, `default     = "1.dkr.ecr.us-east-1.amazonaws.com/c:v1"`,
				`default     = "2h"`, `default     = ["warehouse/"]`, "bin/lambda/amd64/function.zip"}},
		{[]string{"deploy", "k8s", "--dry-run", "--namespace", "analytics", "--function-image", "r/f:1", "--coordinator-image", "r/c:1", "--functions", "7"},
			[]string{"namespace: analytics", "newName: r/f\n    newTag: \"1\"", "newName: r/c", `"--functions", "7"`, "sluice-function.analytics.svc.cluster.local",
				`autoscaling.knative.dev/max-scale: "7"`}},
	} {
		out, err := runCLI(t, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q", tc.args[1], w)
			}
		}
	}
}

// TestDeployFunctionPackage: the module's function_package is the
// package's path as seen from --out, where terraform runs (-chdir), for
// the default --out, any other --out, and --arch amd64.
func TestDeployFunctionPackage(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "pkg", "function.zip")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "../../../bin/lambda/arm64/function.zip"}, // --out .tmp/deploy/aws
		{[]string{"--out", "deploy"}, "../bin/lambda/arm64/function.zip"},
		{[]string{"--out", "a/b/c/d", "--arch", "amd64"}, "../../../../bin/lambda/amd64/function.zip"},
		{[]string{"--out", ".", "--function-package", "dist/fn.zip"}, "dist/fn.zip"},
		{[]string{"--out", "x", "--function-package", abs}, filepath.ToSlash(abs)},
	} {
		out, err := runCLI(t, append([]string{"deploy", "aws", "--dry-run"}, tc.args...)...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		vars := splitDryRun(t, out)["variables.tf"]
		_, rest, _ := strings.Cut(vars, `variable "function_package"`)
		m := regexp.MustCompile(`default += "([^"]*)"`).FindStringSubmatch(rest)
		if m == nil || m[1] != tc.want {
			t.Errorf("%v: function_package %q, want %q", tc.args, m, tc.want)
		}
	}
}

func TestDeployPlatformErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		path string // PATH for the run; "" keeps it
		want string
	}{
		{[]string{"deploy", "aws", "--dry-run", "--arch", "sparc"}, "", `--arch "sparc"`},
		{[]string{"deploy", "aws", "--dry-run", "--function-memory", "100000KiB"}, "", "whole MiB"},
		{[]string{"deploy", "aws", "--dry-run", "--function-memory", "20GiB"}, "", "128 to 10240"},
		{[]string{"deploy", "k8s", "--dry-run", "--namespace", "Bad_NS"}, "", `namespace "Bad_NS"`},
		{[]string{"deploy", "aws", "--dry-run", "--prices", "prices.json"}, "", "inline form"},
		{[]string{"deploy", "aws", "--out", t.TempDir()}, t.TempDir(), "terraform is not on PATH"},
		{[]string{"deploy", "k8s", "--out", t.TempDir()}, t.TempDir(), "kubectl is not on PATH"},
	} {
		if tc.path != "" {
			t.Setenv("PATH", tc.path)
		}
		_, err := runCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.args, err, tc.want)
		}
	}
}

// serveFlags returns the flag names and environment variables of
// sluice coordinator serve (with the app's global flags).
func serveFlags(t *testing.T) (flags, env map[string]bool) {
	flags, env = map[string]bool{}, map[string]bool{"AWS_REGION": true, "AWS_ACCESS_KEY_ID": true, "AWS_SECRET_ACCESS_KEY": true,
		"SLUICE_FUNCTION_SECRET": true} // objstore.S3ConfigFromEnv, functionSecret
	serve := coordinatorCommand().Subcommands[0]
	all := append(append([]cli.Flag(nil), serve.Flags...), newApp().Flags...)
	for _, f := range all {
		for _, n := range f.Names() {
			flags[n] = true
		}
		if e, ok := f.(interface{ GetEnvVars() []string }); ok {
			for _, v := range e.GetEnvVars() {
				env[v] = true
			}
		}
	}
	if !env["SLUICE_TOKEN"] || !env["SLUICE_REDIS_URL"] || !env["SLUICE_COORDINATOR_ADDR"] || !env["SLUICE_LOG_LEVEL"] {
		t.Fatalf("coordinator serve no longer reads the variables the templates rely on: %v", env)
	}
	return flags, env
}

// TestDeployTemplatesMatchServe: every flag the templates pass to
// coordinator serve exists, every variable they set is read, and the API
// port is the image's.
func TestDeployTemplatesMatchServe(t *testing.T) {
	flags, env := serveFlags(t)
	check := func(where string, args, names []string) {
		if len(args) < 3 || args[0] != "coordinator" || args[1] != "serve" {
			t.Errorf("%s: command %v, want coordinator serve ...", where, args)
		}
		for _, a := range args {
			if n, ok := strings.CutPrefix(a, "--"); ok && !flags[n] {
				t.Errorf("%s: passes --%s, which coordinator serve does not have", where, n)
			}
		}
		for _, n := range names {
			if !env[n] {
				t.Errorf("%s: sets %s, which the coordinator never reads", where, n)
			}
		}
		if len(names) == 0 {
			t.Errorf("%s: no environment", where)
		}
	}

	// AWS: the ECS container definition.
	tf, err := os.ReadFile("../../infra/aws/coordinator.tf")
	if err != nil {
		t.Fatal(err)
	}
	cmd := regexp.MustCompile(`(?s)command = \[(.*?)\]`).FindSubmatch(tf)
	if cmd == nil {
		t.Fatal("no command in coordinator.tf")
	}
	var args []string
	for _, m := range regexp.MustCompile(`"([^"]*)"`).FindAllSubmatch(cmd[1], -1) {
		args = append(args, string(m[1]))
	}
	var names []string
	for _, m := range regexp.MustCompile(`\{ name = "([A-Z0-9_]+)", value`).FindAllSubmatch(tf, -1) {
		names = append(names, string(m[1]))
	}
	check("infra/aws/coordinator.tf", args, names)
	if !bytes.Contains(tf, []byte(`"0.0.0.0:${local.api_port}"`)) {
		t.Error("coordinator.tf: SLUICE_COORDINATOR_ADDR not on local.api_port")
	}

	// Kubernetes: the Deployment.
	b, err := os.ReadFile("../../infra/k8s/coordinator.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var dep struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Args  []string `yaml:"args"`
						Env   []struct{ Name, Value string }
						Ports []struct {
							ContainerPort int `yaml:"containerPort"`
						}
					}
				}
			}
		}
	}
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&dep); err != nil {
		t.Fatal(err)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	names = nil
	for _, e := range c.Env {
		names = append(names, e.Name)
		if e.Name == "SLUICE_COORDINATOR_ADDR" && e.Value != "0.0.0.0:7070" {
			t.Errorf("k8s: SLUICE_COORDINATOR_ADDR %q", e.Value)
		}
	}
	check("infra/k8s/coordinator.yaml", c.Args, names)

	// The image: its default command and address.
	df, err := os.ReadFile("../../infra/Dockerfile.coordinator")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`ENTRYPOINT ["/sluice"]`, `CMD ["coordinator", "serve"]`, "ENV SLUICE_COORDINATOR_ADDR=0.0.0.0:7070", "EXPOSE 7070", "USER nonroot"} {
		if !bytes.Contains(df, []byte(want)) {
			t.Errorf("infra/Dockerfile.coordinator lacks %q", want)
		}
	}
	if len(c.Ports) == 0 || c.Ports[0].ContainerPort != 7070 {
		t.Errorf("k8s coordinator port %v, want 7070", c.Ports)
	}
}
