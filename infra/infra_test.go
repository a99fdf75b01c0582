package infra

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluicedb/sluice/function"
)

// codeEnv returns the environment variables the function binary reads:
// the string literals passed to os.Getenv and os.LookupEnv in its main
// package and in the S3 configuration it uses.
func codeEnv(t *testing.T) map[string]bool {
	t.Helper()
	env := map[string]bool{}
	for _, path := range []string{"../cmd/sluice-function/main.go", "../shuffle/objstore/s3.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "os" || (sel.Sel.Name != "Getenv" && sel.Sel.Name != "LookupEnv") {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, _ := strconv.Unquote(lit.Value)
				env[s] = true
			}
			// os.Getenv(function.SecretEnv): the shared invocation secret.
			if sel, ok := call.Args[0].(*ast.SelectorExpr); ok && sel.Sel.Name == "SecretEnv" {
				env[function.SecretEnv] = true
			}
			return true
		})
	}
	for _, must := range []string{"SLUICE_S3_ENDPOINT", "SLUICE_S3_BUCKET", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
		"AWS_REGION", "SLUICE_REDIS_URL", "AWS_LAMBDA_RUNTIME_API", "PORT"} {
		if !env[must] {
			t.Fatalf("the function code no longer reads %s; update this test and the templates (found %v)", must, env)
		}
	}
	return env
}

// defaultPort is the port the function binary listens on without --addr
// and $PORT.
func defaultPort(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("../cmd/sluice-function/main.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\*addr = "(?:127\.0\.0\.1)?:(\d+)"`).FindSubmatch(b)
	if m == nil {
		t.Fatal("default listen address not found in cmd/sluice-function/main.go")
	}
	p, _ := strconv.Atoi(string(m[1]))
	return p
}

// lambdaReserved are variables Lambda sets itself and refuses in a
// function's configuration.
var lambdaReserved = []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
	"AWS_SESSION_TOKEN", "AWS_LAMBDA_RUNTIME_API", "_HANDLER", "LAMBDA_TASK_ROOT", "AWS_EXECUTION_ENV"}

// s3Actions is everything the function's role may do in S3.
var s3Actions = []string{"s3:DeleteObject", "s3:GetObject", "s3:ListBucket", "s3:PutObject"}

func checkEnv(t *testing.T, where string, names []string, code map[string]bool, lambda bool) {
	t.Helper()
	if len(names) == 0 {
		t.Fatalf("%s: no environment variables", where)
	}
	if !slices.Contains(names, "SLUICE_S3_BUCKET") {
		t.Errorf("%s: SLUICE_S3_BUCKET not set", where)
	}
	for _, n := range names {
		if !code[n] {
			t.Errorf("%s: sets %s, which the function never reads", where, n)
		}
		if lambda && slices.Contains(lambdaReserved, n) {
			t.Errorf("%s: sets %s, which Lambda reserves", where, n)
		}
		if n == "PORT" {
			t.Errorf("%s: sets PORT (the platform does)", where)
		}
	}
}

func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// get walks maps and lists: get(m, "a", "b", 0, "c").
func get(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: not a map: %v", p, v)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("at %v: not a list of > %d: %v", p, k, v)
			}
			v = l[k]
		}
	}
	return v
}

func keys(m any) []string {
	mm, _ := m.(map[string]any)
	var out []string
	for k := range mm {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func strs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, strs(e)...)
		}
		return out
	case map[string]any:
		// Intrinsic functions (Fn::Sub, Fn::If): their strings.
		var out []string
		for _, k := range keys(x) {
			out = append(out, strs(x[k])...)
		}
		return out
	}
	return nil
}

// statements collects the IAM statements anywhere under v.
func statements(v any) []map[string]any {
	var out []map[string]any
	switch x := v.(type) {
	case map[string]any:
		if st, ok := x["Statement"].([]any); ok {
			for _, s := range st {
				if m, ok := s.(map[string]any); ok {
					out = append(out, m)
				}
			}
		}
		for _, e := range x {
			out = append(out, statements(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, statements(e)...)
		}
	}
	return out
}

func TestSAMTemplate(t *testing.T) {
	code := codeEnv(t)
	m := readYAML(t, "sam/template.yaml")
	if get(t, m, "Transform") != "AWS::Serverless-2016-10-31" {
		t.Fatal("not a SAM template")
	}
	fn := get(t, m, "Resources", "Function")
	if get(t, fn, "Type") != "AWS::Serverless::Function" {
		t.Fatalf("Function type %v", get(t, fn, "Type"))
	}
	props := get(t, fn, "Properties")
	if r := get(t, props, "Runtime"); r != "provided.al2023" {
		t.Errorf("Runtime %v", r)
	}
	if h := get(t, props, "Handler"); h != "bootstrap" {
		t.Errorf("Handler %v", h)
	}
	checkEnv(t, "sam", keys(get(t, props, "Environment", "Variables")), code, true)
	archs := strs(get(t, m, "Parameters", "Architecture", "AllowedValues"))
	if !slices.Equal(archs, []string{"arm64", "x86_64"}) {
		t.Errorf("architectures %v", archs)
	}
	if to := get(t, m, "Parameters", "Timeout", "Default"); to.(int) > 900 {
		t.Errorf("timeout %v beyond Lambda's 900 s", to)
	}
	// The role: S3 on the bucket prefix only, plus its own log group.
	var s3 []string
	for _, st := range statements(get(t, m, "Resources", "FunctionRole", "Properties", "Policies")) {
		if get(t, st, "Effect") != "Allow" {
			t.Errorf("statement %v", st)
		}
		res := strings.Join(strs(get(t, st, "Resource")), " ")
		for _, a := range strs(get(t, st, "Action")) {
			switch {
			case strings.HasPrefix(a, "s3:") && !strings.Contains(a, "*"):
				s3 = append(s3, a)
				if !strings.Contains(res, "s3:::${Bucket}") {
					t.Errorf("%s on %q: not limited to the bucket", a, res)
				}
				if a != "s3:ListBucket" && !strings.Contains(res, "${Bucket}/${Prefix}/*") {
					t.Errorf("%s on %q: not limited to the prefix", a, res)
				}
				if a == "s3:ListBucket" && !strings.Contains(strings.Join(strs(get(t, st, "Condition", "StringLike", "s3:prefix")), " "), "${Prefix}/*") {
					t.Errorf("ListBucket not limited to the prefix: %v", st)
				}
			case a == "logs:CreateLogStream" || a == "logs:PutLogEvents":
				if !strings.Contains(res, "/aws/lambda/${FunctionName}") {
					t.Errorf("%s on %q: not its own log group", a, res)
				}
			default:
				t.Errorf("role allows %s", a)
			}
		}
	}
	slices.Sort(s3)
	if !slices.Equal(s3, s3Actions) {
		t.Errorf("S3 actions %v, want %v", s3, s3Actions)
	}
}

func TestTerraformModule(t *testing.T) {
	code := codeEnv(t)
	var all []byte
	for _, f := range []string{"terraform/main.tf", "terraform/variables.tf", "terraform/outputs.tf"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(string(b), "{") != strings.Count(string(b), "}") {
			t.Fatalf("%s: unbalanced braces", f)
		}
		all = append(all, b...)
	}
	src := string(all)
	fn := block(t, src, `resource "aws_lambda_function" "function"`)
	for _, want := range []string{`runtime          = "provided.al2023"`, `handler          = "bootstrap"`} {
		if !strings.Contains(fn, want) {
			t.Errorf("aws_lambda_function lacks %s", want)
		}
	}
	env := block(t, src, "environment = merge(")
	var names []string
	for _, m := range regexp.MustCompile(`\b([A-Z][A-Z0-9_]+)\s*=`).FindAllStringSubmatch(env, -1) {
		names = append(names, m[1])
	}
	checkEnv(t, "terraform", names, code, true)
	var s3 []string
	for _, m := range regexp.MustCompile(`actions\s*=\s*\[([^\]]*)\]`).FindAllStringSubmatch(src, -1) {
		for _, a := range regexp.MustCompile(`"([^"]+)"`).FindAllStringSubmatch(m[1], -1) {
			switch {
			case strings.HasPrefix(a[1], "s3:"):
				s3 = append(s3, a[1])
			case a[1] == "sts:AssumeRole", a[1] == "logs:CreateLogStream", a[1] == "logs:PutLogEvents":
			default:
				t.Errorf("role allows %s", a[1])
			}
		}
	}
	slices.Sort(s3)
	if !slices.Equal(s3, s3Actions) {
		t.Errorf("S3 actions %v, want %v", s3, s3Actions)
	}
	pol := block(t, src, `data "aws_iam_policy_document" "bucket_prefix"`)
	if !strings.Contains(pol, `"${local.bucket_arn}/${local.key_prefix}*"`) || !strings.Contains(pol, `"s3:prefix"`) {
		t.Errorf("bucket policy not limited to the prefix:\n%s", pol)
	}
	if tf, err := exec.LookPath("terraform"); err == nil {
		cmd := exec.Command(tf, "fmt", "-check", "-diff", ".")
		cmd.Dir = "terraform"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("terraform fmt -check: %v\n%s", err, out)
		}
	}
}

// block returns the text from head to its matching closing brace or
// parenthesis.
func block(t *testing.T, src, head string) string {
	t.Helper()
	i := strings.Index(src, head)
	if i < 0 {
		t.Fatalf("%q not found", head)
	}
	depth := 0
	for j := i + len(head) - 1; j < len(src); j++ {
		switch src[j] {
		case '{', '(':
			depth++
		case '}', ')':
			depth--
			if depth == 0 {
				return src[i : j+1]
			}
		}
	}
	t.Fatalf("%q: unterminated", head)
	return ""
}

// httpPaths checks that the function's HTTP adapter answers the paths the
// templates name.
func httpPaths(t *testing.T, health string) {
	t.Helper()
	srv := httptest.NewServer(function.HTTPHandler(function.NewRuntime(nil, nil, nil)))
	defer srv.Close()
	resp, err := http.Get(srv.URL + health)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %d", health, resp.StatusCode)
	}
	resp, err = http.Post(srv.URL+"/invoke", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("POST /invoke: %d", resp.StatusCode)
	}
}

func TestKnativeService(t *testing.T) {
	code := codeEnv(t)
	m := readYAML(t, "knative/service.yaml")
	if get(t, m, "apiVersion") != "serving.knative.dev/v1" || get(t, m, "kind") != "Service" {
		t.Fatalf("not a Knative Service: %v %v", get(t, m, "apiVersion"), get(t, m, "kind"))
	}
	c := get(t, m, "spec", "template", "spec", "containers", 0)
	if p := get(t, c, "ports", 0, "containerPort"); p != defaultPort(t) {
		t.Errorf("containerPort %v, function listens on %d", p, defaultPort(t))
	}
	var names []string
	for _, e := range get(t, c, "env").([]any) {
		names = append(names, get(t, e, "name").(string))
	}
	checkEnv(t, "knative", names, code, false)
	httpPaths(t, get(t, c, "readinessProbe", "httpGet", "path").(string))
	// The image is a kustomize parameter, set with kustomize edit set image.
	if img := get(t, c, "image"); img != "sluice-function" {
		t.Errorf("image %v, want the kustomize name sluice-function", img)
	}
	k := readYAML(t, "knative/kustomization.yaml")
	if get(t, k, "images", 0, "name") != "sluice-function" {
		t.Error("knative/kustomization.yaml does not parameterize the image sluice-function")
	}
}

func TestOpenFaaSStack(t *testing.T) {
	code := codeEnv(t)
	m := readYAML(t, "openfaas/stack.yml")
	if get(t, m, "provider", "name") != "openfaas" {
		t.Fatal("not an OpenFaaS stack")
	}
	fn := get(t, m, "functions", "sluice-function")
	checkEnv(t, "openfaas", keys(get(t, fn, "environment")), code, false)
	httpPaths(t, get(t, fn, "annotations", "com.openfaas.health.http.path").(string))
	// The image is a parameter faas-cli fills in from the environment.
	if img := get(t, fn, "image").(string); img != "${SLUICE_FUNCTION_IMAGE}" {
		t.Errorf("image %s, want the parameter ${SLUICE_FUNCTION_IMAGE}", img)
	}
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	port := strconv.Itoa(defaultPort(t))
	for _, want := range []string{"CGO_ENABLED=0", "./cmd/sluice-function", "EXPOSE " + port, "ENV PORT=" + port,
		`ENTRYPOINT ["/sluice-function"]`} {
		if !strings.Contains(src, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if !regexp.MustCompile(`(?m)^FROM golang:1\.\d+`).MatchString(src) {
		t.Error("Dockerfile does not build with a Go image")
	}
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVer := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if goVer == nil || !strings.Contains(src, "FROM golang:"+string(goVer[1])) {
		t.Errorf("Dockerfile Go version differs from go.mod's %s", goVer)
	}
}

// TestMakeFunction: make function builds the `bootstrap` the Lambda
// templates name, for the architectures they allow.
func TestMakeFunction(t *testing.T) {
	b, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for _, want := range []string{"LAMBDA_ARCHS := amd64 arm64", "/lambda/$$arch/bootstrap ./cmd/sluice-function", "CGO_ENABLED=0 GOOS=linux"} {
		if !strings.Contains(src, want) {
			t.Errorf("Makefile function target lacks %q", want)
		}
	}
}

// TestFunctionBinaryIsLean: the function binary every template deploys
// holds no SQL front end (pg_query needs cgo) and no AWS SDK (the function
// reaches S3 through minio-go and Lambda through aws-lambda-go).
func TestFunctionBinaryIsLean(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "../cmd/sluice-function")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.Contains(pkg, "pg_query") || strings.HasPrefix(pkg, "github.com/aws/aws-sdk-go-v2") ||
			pkg == "github.com/sluicedb/sluice/planner" || pkg == "github.com/sluicedb/sluice/coordinator" {
			t.Errorf("cmd/sluice-function links %s", pkg)
		}
	}
	if !strings.Contains(string(out), "github.com/aws/aws-lambda-go/lambda\n") {
		t.Error("cmd/sluice-function does not link the Lambda runtime client")
	}
}
