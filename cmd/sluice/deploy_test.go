package main

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// fakeELF is the start of a 64-bit Linux executable for machine m.
func fakeELF(m byte) []byte {
	b := make([]byte, 64)
	copy(b, "\x7fELF\x02\x01\x01")
	b[18] = m
	return b
}

func runDeploy(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	app := &cli.App{Name: "sluice", Commands: []*cli.Command{deployCommand()}, Writer: &out, ErrWriter: &out,
		ExitErrHandler: func(*cli.Context, error) {}}
	err := app.RunContext(context.Background(), append([]string{"sluice", "deploy", "lambda"}, args...))
	return out.String(), err
}

// TestDeployLambdaDryRun: --dry-run prints the create and update calls
// with the runtime, handler and environment the templates in infra/ use,
// zipping a bare bootstrap, and makes no request (no credentials or
// region are set here).
func TestDeployLambdaDryRun(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	dir := t.TempDir()
	boot := filepath.Join(dir, "bootstrap")
	if err := os.WriteFile(boot, fakeELF(183), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := runDeploy(t, "--name", "sluice-fn", "--role", "arn:aws:iam::123456789012:role/sluice", "--bucket", "data",
		"--zip", boot, "--redis", "rediss://u:secret@redis:6379", "--env", "SLUICE_S3_SSL=true", "--dry-run")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"lambda:GetFunction", "lambda:CreateFunction", "lambda:UpdateFunctionCode", "lambda:UpdateFunctionConfiguration",
		`"Runtime": "provided.al2023"`, `"Handler": "bootstrap"`, `"arm64"`, `"SLUICE_S3_BUCKET": "data"`, `"SLUICE_S3_SSL": "true"`,
		`"SLUICE_REDIS_URL": "rediss://***@redis:6379"`, `"Timeout": 900`, "zipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret") {
		t.Errorf("dry run shows the Redis password:\n%s", out)
	}
	// The templates agree with what deploy sends.
	sam, err := os.ReadFile("../../infra/sam/template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Runtime: " + lambdaRuntime, "Handler: " + lambdaHandler} {
		if !strings.Contains(string(sam), want) {
			t.Errorf("infra/sam/template.yaml lacks %q", want)
		}
	}
}

func TestDeployLambdaChecks(t *testing.T) {
	dir := t.TempDir()
	arm := filepath.Join(dir, "bootstrap")
	_ = os.WriteFile(arm, fakeELF(183), 0o755)
	notExec := filepath.Join(dir, "bad.zip")
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("bootstrap")
	_, _ = w.Write([]byte("x"))
	_ = zw.Close()
	_ = os.WriteFile(notExec, zb.Bytes(), 0o644)
	text := filepath.Join(dir, "notes.txt")
	_ = os.WriteFile(text, []byte("hello"), 0o644)
	base := []string{"--name", "f", "--role", "arn:aws:iam::1:role/r", "--bucket", "b", "--dry-run"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--zip", arm, "--arch", "amd64"}, "not built for x86_64"},
		{[]string{"--zip", notExec}, "not executable"},
		{[]string{"--zip", text}, "neither a zip nor a Linux executable"},
		{[]string{"--zip", arm, "--timeout", "20m"}, "1s to 15m"},
		{[]string{"--zip", arm, "--env", "AWS_REGION=x"}, "reserves"},
		{[]string{"--zip", filepath.Join(dir, "missing")}, "make function"},
	} {
		out, err := runDeploy(t, append(slicesClone(base), c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v, want %q\n%s", c.args, err, c.want, out)
		}
	}
	if _, err := runDeploy(t, "--name", "f", "--role", "not-an-arn", "--bucket", "b", "--zip", arm, "--dry-run"); err == nil {
		t.Error("a role that is no ARN is accepted")
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }
