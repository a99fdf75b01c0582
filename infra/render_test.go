package infra

import (
	"bytes"
	"errors"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite infra/aws and infra/k8s from the templates")

// TestRenderedFilesMatch keeps the checked-in renderings of the default
// settings (infra/aws, infra/k8s) identical to what Render makes, which is
// what sluice deploy aws|k8s --dry-run prints (cmd/sluice checks that).
func TestRenderedFilesMatch(t *testing.T) {
	for _, target := range Targets {
		t.Run(target, func(t *testing.T) {
			files, err := Render(target, Settings{})
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.RemoveAll(target); err != nil {
					t.Fatal(err)
				}
				for _, f := range files {
					if err := os.MkdirAll(filepath.Dir(filepath.Join(target, f.Path)), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(target, f.Path), f.Data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			var onDisk []string
			_ = filepath.WalkDir(target, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					onDisk = append(onDisk, filepath.ToSlash(strings.TrimPrefix(p, target+string(filepath.Separator))))
				}
				return nil
			})
			var rendered []string
			for _, f := range files {
				rendered = append(rendered, f.Path)
				b, err := os.ReadFile(filepath.Join(target, f.Path))
				if err != nil {
					t.Errorf("%s/%s missing (go test ./infra/ -run TestRenderedFilesMatch -update): %v", target, f.Path, err)
					continue
				}
				if !bytes.Equal(b, f.Data) {
					t.Errorf("%s/%s differs from the template's rendering (go test ./infra/ -run TestRenderedFilesMatch -update)", target, f.Path)
				}
			}
			sort.Strings(onDisk)
			if !slices.Equal(onDisk, rendered) {
				t.Errorf("%s holds %v, the templates render %v", target, onDisk, rendered)
			}
		})
	}
}

func TestRenderSettings(t *testing.T) {
	for _, tc := range []struct {
		name    string
		target  string
		s       Settings
		wantErr string
		want    []string // substrings of the rendering
	}{
		{name: "aws defaults", target: "aws", want: []string{`default     = "arm64"`, `default     = 2048`, `"jobs/"`, `default     = "sluice-data"`}},
		{name: "aws settings", target: "aws", s: Settings{Name: "prod", FunctionArch: "x86_64", FunctionMemoryMB: 4096, Functions: 50,
			CoordinatorImage: "123.dkr.ecr.eu-west-1.amazonaws.com/sluice-coordinator:v1", Region: "eu-west-1", Retention: 90 * time.Minute,
			TablePrefixes: []string{"warehouse/", "raw/"}},
			want: []string{`default     = "prod"`, `default     = "x86_64"`, `bin/lambda/amd64/function.zip`, `default     = 4096`,
				`default     = "123.dkr.ecr.eu-west-1.amazonaws.com/sluice-coordinator:v1"`, `default     = "1h30m"`, `["warehouse/", "raw/"]`}},
		{name: "k8s images", target: "k8s", s: Settings{CoordinatorImage: "reg:5000/team/sluice-coordinator:v2", FunctionImage: "ghcr.io/x/fn@sha256:abc"},
			want: []string{"newName: reg:5000/team/sluice-coordinator\n    newTag: \"v2\"", "newName: ghcr.io/x/fn\n    digest: sha256:abc"}},
		{name: "unknown target", target: "gcp", wantErr: `target "gcp"`},
		{name: "bad name", target: "aws", s: Settings{Name: "Prod_1"}, wantErr: `name "Prod_1"`},
		{name: "bad arch", target: "aws", s: Settings{FunctionArch: "riscv"}, wantErr: "function arch"},
		{name: "memory", target: "aws", s: Settings{FunctionMemoryMB: 20000}, wantErr: "function memory 20000"},
		{name: "table prefix under jobs", target: "aws", s: Settings{TablePrefixes: []string{"jobs/x/"}}, wantErr: "table prefix"},
		{name: "table prefix without slash", target: "aws", s: Settings{TablePrefixes: []string{"tables"}}, wantErr: "table prefix"},
		{name: "retention over lifecycle", target: "aws", s: Settings{Retention: 10 * 24 * time.Hour}, wantErr: "longer than the 7-day"},
		{name: "quote in image", target: "k8s", s: Settings{FunctionImage: `x" y`}, wantErr: "image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := Render(tc.target, tc.s)
			if tc.wantErr != "" {
				if err == nil || !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want ErrSettings with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var all strings.Builder
			for _, f := range files {
				all.Write(f.Data)
			}
			for _, w := range tc.want {
				if !strings.Contains(all.String(), w) {
					t.Errorf("rendering lacks %q", w)
				}
			}
		})
	}
}

// parseTF parses every .tf file of dir.
func parseTF(t *testing.T, dir string) map[string]*hclsyntax.Body {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	if len(paths) == 0 {
		t.Fatalf("no .tf files in %s", dir)
	}
	out := map[string]*hclsyntax.Body{}
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, diags := hclsyntax.ParseConfig(src, p, hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", p, diags.Error())
		}
		out[filepath.Base(p)] = f.Body.(*hclsyntax.Body)
	}
	return out
}

// tfBlock finds the block `typ "l0" "l1"` in any of the files.
func tfBlock(t *testing.T, files map[string]*hclsyntax.Body, typ string, labels ...string) *hclsyntax.Block {
	t.Helper()
	for _, body := range files {
		for _, b := range body.Blocks {
			if b.Type == typ && slices.Equal(b.Labels, labels) {
				return b
			}
		}
	}
	t.Fatalf("no block %s %v", typ, labels)
	return nil
}

// policyActions returns the actions of a literal aws_iam_policy_document.
func policyActions(t *testing.T, files map[string]*hclsyntax.Body, name string) []string {
	t.Helper()
	var acts []string
	for _, st := range tfBlock(t, files, "data", "aws_iam_policy_document", name).Body.Blocks {
		if st.Type != "statement" {
			continue
		}
		v, diags := st.Body.Attributes["actions"].Expr.Value(nil)
		if diags.HasErrors() {
			t.Fatalf("policy %s: actions are not a literal list: %s", name, diags.Error())
		}
		for _, a := range v.AsValueSlice() {
			acts = append(acts, a.AsString())
		}
	}
	sort.Strings(acts)
	return slices.Compact(acts)
}

// bucketCalls returns the objstore.Bucket methods called (x.Method(ctx,
// ...) on a selector) in the non-test Go files of dirs.
func bucketCalls(t *testing.T, files ...string) map[string]bool {
	t.Helper()
	methods := []string{"Get", "GetRange", "Stat", "Put", "PutReader", "List", "Delete", "DeletePrefix"}
	found := map[string]bool{}
	for _, pat := range files {
		paths, _ := filepath.Glob(pat)
		for _, p := range paths {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) < 2 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !slices.Contains(methods, sel.Sel.Name) {
					return true
				}
				if id, ok := call.Args[0].(*ast.Ident); ok && strings.Contains(id.Name, "ctx") {
					found[sel.Sel.Name] = true
				}
				return true
			})
		}
	}
	return found
}

// statementKeyPrefixes returns the literal prefixes (up to their last
// '/') of the keys the statements name with env.Key("...") in files.
func statementKeyPrefixes(t *testing.T, pattern string) []string {
	t.Helper()
	paths, _ := filepath.Glob(pattern)
	var out []string
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Key" {
				return true
			}
			arg := call.Args[0]
			if b, ok := arg.(*ast.BinaryExpr); ok { // "tables/" + name + "/"
				for {
					l, ok := b.X.(*ast.BinaryExpr)
					if !ok {
						break
					}
					b = l
				}
				arg = b.X
			}
			if lit, ok := arg.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, _ := strconv.Unquote(lit.Value)
				if s = s[:strings.LastIndex(s, "/")+1]; s != "" && !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
			return true
		})
	}
	sort.Strings(out)
	return out
}

// s3ActionOf maps a Bucket method to the IAM actions its S3 requests
// need (objstore/s3.go: Get/GetRange/Stat are GET and HEAD object, Put
// and PutReader PUT object or a multipart upload, List lists objects,
// Delete and DeletePrefix delete objects).
var s3ActionOf = map[string][]string{
	"Get": {"s3:GetObject"}, "GetRange": {"s3:GetObject"}, "Stat": {"s3:GetObject"},
	"Put": {"s3:PutObject", "s3:AbortMultipartUpload"}, "PutReader": {"s3:PutObject", "s3:AbortMultipartUpload"},
	"List": {"s3:ListBucket"}, "Delete": {"s3:DeleteObject"}, "DeletePrefix": {"s3:ListBucket", "s3:DeleteObject"},
}

func actionsOf(calls map[string]bool, extra ...string) []string {
	out := slices.Clone(extra)
	for m := range calls {
		out = append(out, s3ActionOf[m]...)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// TestAWSModule parses the Terraform module and checks it against the
// code: the IAM actions are exactly those the S3 and Lambda calls of each
// side need, the function's settings match deploy lambda's, and the ports
// match the coordinator's.
func TestAWSModule(t *testing.T) {
	files := parseTF(t, "aws")
	for name, body := range files {
		for _, b := range body.Blocks {
			if b.Type != "variable" {
				continue
			}
			if _, ok := b.Body.Attributes["description"]; !ok {
				t.Errorf("%s: variable %s has no description", name, b.Labels[0])
			}
		}
	}

	// The function: what function/ and the shuffle reader and writer call.
	fnCalls := bucketCalls(t, "../function/*.go", "../cmd/sluice-function/*.go", "../shuffle/reader.go", "../shuffle/writer.go", "../shuffle/manifest.go")
	for _, m := range []string{"List", "Delete", "DeletePrefix"} {
		if fnCalls[m] {
			t.Errorf("the function now calls Bucket.%s: grant it in function.tf (and update this test)", m)
		}
	}
	// s3:ListBucket: a missing object is a 404 only with it (Stat of the
	// output manifest); the ENI and log actions are Lambda's own.
	wantFn := actionsOf(fnCalls, "s3:ListBucket", "ec2:CreateNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DeleteNetworkInterface",
		"ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses", "logs:CreateLogStream", "logs:PutLogEvents")
	sort.Strings(wantFn)
	if got := policyActions(t, files, "function"); !slices.Equal(got, wantFn) {
		t.Errorf("function policy actions\n got %v\nwant %v (from the code's Bucket calls)", got, wantFn)
	}

	// The coordinator: its own calls, the catalog's (registering tables)
	// and the Lambda invoker's.
	// coordinator/sqlsession: CREATE TABLE AS, COPY TO and INSERT INTO
	// (commit markers, OVERWRITE's deletes, a target's listing).
	coCalls := bucketCalls(t, "../coordinator/*.go", "../coordinator/sqlsession/*.go", "../planner/catalog/*.go", "../shuffle/stats.go")
	invoke, err := os.ReadFile("../coordinator/invoke_lambda.go")
	if err != nil {
		t.Fatal(err)
	}
	lambdaOps := map[string]string{"Invoke": "lambda:InvokeFunction", "InvokeWithResponseStream": "lambda:InvokeFunction",
		"GetFunction": "lambda:GetFunction", "GetFunctionConfiguration": "lambda:GetFunctionConfiguration"}
	var extra []string
	for op, act := range lambdaOps {
		if bytes.Contains(invoke, []byte("client."+op+"(")) {
			extra = append(extra, act)
		}
	}
	if !slices.Contains(extra, "lambda:InvokeFunction") {
		t.Fatal("coordinator/invoke_lambda.go no longer calls client.Invoke; update this test")
	}
	wantCo := actionsOf(coCalls, append(extra, "s3:ListBucket")...) // HEAD bucket at start is ListBucket
	if got := policyActions(t, files, "coordinator"); !slices.Equal(got, wantCo) {
		t.Errorf("coordinator policy actions\n got %v\nwant %v (from the code's Bucket and Lambda calls)", got, wantCo)
	}
	// The coordinator may invoke only this function.
	for _, st := range tfBlock(t, files, "data", "aws_iam_policy_document", "coordinator").Body.Blocks {
		v, _ := st.Body.Attributes["actions"].Expr.Value(nil)
		if v.LengthInt() == 1 && v.Index(cty.NumberIntVal(0)).AsString() == "lambda:InvokeFunction" {
			res := string(st.Body.Attributes["resources"].Expr.Range().SliceBytes(mustRead(t, st.Body.Attributes["resources"].Expr.Range().Filename)))
			if res != "[aws_lambda_function.function.arn]" {
				t.Errorf("lambda:InvokeFunction on %s, want only [aws_lambda_function.function.arn]", res)
			}
		}
	}
	// Writes of both roles only under jobs/ and the write prefixes, where
	// CREATE TABLE AS, COPY TO and INSERT INTO write (the function their
	// files, the coordinator their commit markers and OVERWRITE's
	// deletes); reads also cover what they wrote.
	wantRes := map[string]string{"s3:PutObject": "concat([local.jobs_arn], local.write_arns)",
		"s3:DeleteObject": "concat([local.jobs_arn], local.write_arns)", "s3:GetObject": "local.read_arns"}
	for _, name := range []string{"function", "coordinator"} {
		for _, st := range tfBlock(t, files, "data", "aws_iam_policy_document", name).Body.Blocks {
			v, _ := st.Body.Attributes["actions"].Expr.Value(nil)
			for _, a := range v.AsValueSlice() {
				if want, ok := wantRes[a.AsString()]; ok {
					r := st.Body.Attributes["resources"].Expr.Range()
					if got := string(r.SliceBytes(mustRead(t, r.Filename))); got != want {
						t.Errorf("%s: %s on %s, want only %s", name, a.AsString(), got, want)
					}
				}
			}
		}
	}
	fnLocals := hclsyntax.Attributes{}
	for _, b := range files["function.tf"].Blocks {
		if b.Type == "locals" {
			fnLocals = b.Body.Attributes
		}
	}
	for attr, want := range map[string]string{
		"write_arns": `[for p in var.write_prefixes : "${local.bucket_arn}/${p}*"]`,
		"read_arns":  `distinct(concat(local.table_arns, local.write_arns, [local.jobs_arn]))`,
	} {
		a, ok := fnLocals[attr]
		if !ok {
			t.Fatalf("function.tf locals lack %s", attr)
		}
		if got := string(a.Expr.Range().SliceBytes(mustRead(t, a.Expr.Range().Filename))); got != want {
			t.Errorf("local.%s = %s, want %s", attr, got, want)
		}
	}
	// The prefixes the statements write under are write prefixes by
	// default: every env.Key("...") of coordinator/sqlsession outside
	// jobs/ (CREATE TABLE AS's tables/), from the code.
	def := Defaults("aws", Settings{})
	wrote := statementKeyPrefixes(t, "../coordinator/sqlsession/*.go")
	if !slices.Contains(wrote, CTASPrefix) {
		t.Errorf("coordinator/sqlsession writes under %v, not under CTASPrefix %q: update CTASPrefix", wrote, CTASPrefix)
	}
	for _, k := range wrote {
		covered := false
		for _, p := range def.WritePrefixes {
			covered = covered || strings.HasPrefix(k, p)
		}
		if !covered {
			t.Errorf("statements write under %q, which the default write prefixes %v do not cover", k, def.WritePrefixes)
		}
	}
	varDefault := func(name string) []string {
		v, diags := tfBlock(t, files, "variable", name).Body.Attributes["default"].Expr.Value(nil)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		var out []string
		for _, e := range v.AsValueSlice() {
			out = append(out, e.AsString())
		}
		return out
	}
	if got := varDefault("write_prefixes"); !slices.Equal(got, def.WritePrefixes) {
		t.Errorf("variable write_prefixes defaults to %v, want %v", got, def.WritePrefixes)
	}

	// The Lambda function: runtime, handler, environment as deploy lambda.
	fn := tfBlock(t, files, "resource", "aws_lambda_function", "function").Body
	for attr, want := range map[string]string{"runtime": "provided.al2023", "handler": "bootstrap"} {
		if v, _ := fn.Attributes[attr].Expr.Value(nil); v.AsString() != want {
			t.Errorf("aws_lambda_function.%s = %s, want %s", attr, v.AsString(), want)
		}
	}
	var envNames []string
	for _, b := range fn.Blocks {
		if b.Type == "environment" {
			obj := b.Body.Attributes["variables"].Expr.(*hclsyntax.ObjectConsExpr)
			for _, it := range obj.Items {
				k, _ := it.KeyExpr.Value(nil)
				envNames = append(envNames, k.AsString())
			}
		}
	}
	checkEnv(t, "aws/function.tf", envNames, codeEnv(t), true)

	// The bucket rule expires jobs/ after lifecycle_days.
	lc := tfBlock(t, files, "resource", "aws_s3_bucket_lifecycle_configuration", "data").Body.Blocks[0]
	var prefix string
	for _, b := range lc.Body.Blocks {
		if b.Type == "filter" {
			v, _ := b.Body.Attributes["prefix"].Expr.Value(nil)
			prefix = v.AsString()
		}
	}
	if prefix != "jobs/" {
		t.Errorf("lifecycle rule filter prefix %q, want jobs/", prefix)
	}

	// Redis with AUTH and TLS.
	rg := tfBlock(t, files, "resource", "aws_elasticache_replication_group", "redis").Body
	if v, _ := rg.Attributes["transit_encryption_enabled"].Expr.Value(nil); !v.True() {
		t.Error("ElastiCache without in-transit TLS")
	}
	if _, ok := rg.Attributes["auth_token"]; !ok {
		t.Error("ElastiCache without an AUTH token")
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTerraformFmt runs terraform fmt -check over the rendered module
// where terraform is installed. terraform validate needs the AWS provider
// from the Terraform registry, which this machine cannot reach; it runs
// only when SLUICE_TERRAFORM_VALIDATE=1 (a machine with registry access).
func TestTerraformFmt(t *testing.T) {
	bin, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform not installed: fmt and validate not run (HCL is still parsed by TestAWSModule)")
	}
	if out, err := exec.Command(bin, "fmt", "-check", "-diff", "aws").CombinedOutput(); err != nil {
		t.Fatalf("terraform fmt -check: %v\n%s", err, out)
	}
	if os.Getenv("SLUICE_TERRAFORM_VALIDATE") != "1" {
		t.Log("terraform validate skipped: it needs the AWS provider from the registry (set SLUICE_TERRAFORM_VALIDATE=1 where reachable)")
		return
	}
	dir := t.TempDir()
	files, err := Render("aws", Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Path), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-backend=false", "-input=false"}, {"validate"}} {
		if out, err := exec.Command(bin, append([]string{"-chdir=" + dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("terraform %v: %v\n%s", args, err, out)
		}
	}
}

// k8sDocs returns every YAML document of the kustomize base.
func k8sDocs(t *testing.T) map[string][]map[string]any {
	t.Helper()
	paths, _ := filepath.Glob("k8s/*.yaml")
	out := map[string][]map[string]any{}
	for _, p := range paths {
		dec := yaml.NewDecoder(bytes.NewReader(mustRead(t, p)))
		for {
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				if err.Error() == "EOF" {
					break
				}
				t.Fatalf("%s: %v", p, err)
			}
			if m != nil {
				out[filepath.Base(p)] = append(out[filepath.Base(p)], m)
			}
		}
	}
	return out
}

// kustomizeBuild renders the base with kubectl's kustomize where kubectl
// is installed (offline).
func kustomizeBuild(t *testing.T, dir string) []byte {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not installed: kustomize build not run")
	}
	out, err := exec.Command(bin, "kustomize", dir).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, ee.Stderr)
		}
		t.Fatal(err)
	}
	return out
}

// TestKustomizeBase checks the Kubernetes manifests: the function's
// environment against the code, the ports and probe paths, 2+ coordinator
// replicas, the NetworkPolicy, and (with kubectl) that kustomize sets
// both images, the Knative Service's too.
func TestKustomizeBase(t *testing.T) {
	docs := k8sDocs(t)
	fn := docs["function.yaml"][0]
	if get(t, fn, "kind") != "Service" || get(t, fn, "apiVersion") != "serving.knative.dev/v1" {
		t.Fatalf("function.yaml is not a Knative Service")
	}
	c := get(t, fn, "spec", "template", "spec", "containers", 0)
	if get(t, c, "image") != "sluice-function" {
		t.Errorf("function image %v, want the kustomize name sluice-function", get(t, c, "image"))
	}
	if p := get(t, c, "ports", 0, "containerPort"); p != defaultPort(t) {
		t.Errorf("function port %v, want %d", p, defaultPort(t))
	}
	checkEnv(t, "k8s/function.yaml", envNamesOf(t, c), codeEnv(t), false)

	co := docs["coordinator.yaml"][0]
	if r := get(t, co, "spec", "replicas"); r.(int) < 2 {
		t.Errorf("coordinator replicas %v, want 2 or more", r)
	}
	cc := get(t, co, "spec", "template", "spec", "containers", 0)
	if get(t, cc, "image") != "sluice-coordinator" {
		t.Errorf("coordinator image %v, want the kustomize name sluice-coordinator", get(t, cc, "image"))
	}
	if get(t, cc, "livenessProbe", "httpGet", "path") != "/healthz" || get(t, cc, "readinessProbe", "httpGet", "path") != "/readyz" {
		t.Error("coordinator probes: want liveness /healthz, readiness /readyz")
	}
	if get(t, cc, "ports", 0, "containerPort") != 7070 {
		t.Error("coordinator port: want 7070")
	}

	np := docs["networkpolicy.yaml"][0]
	if get(t, np, "spec", "podSelector", "matchLabels", "app.kubernetes.io/component") != "function" {
		t.Error("first NetworkPolicy does not select the function pods")
	}
	if get(t, np, "spec", "ingress", 0, "from", 0, "podSelector", "matchLabels", "app.kubernetes.io/component") != "coordinator" {
		t.Error("function NetworkPolicy does not admit the coordinators")
	}

	// kustomize with images set, as a user does with kustomize edit set image.
	dir := t.TempDir()
	files, err := Render("k8s", Settings{CoordinatorImage: "registry.example/sluice-coordinator:v9", FunctionImage: "registry.example/sluice-function:v9"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Path), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := kustomizeBuild(t, dir)
	for _, want := range []string{"image: registry.example/sluice-coordinator:v9", "image: registry.example/sluice-function:v9", "namespace: sluice"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("kustomize output lacks %q", want)
		}
	}
	if bytes.Contains(out, []byte("image: sluice-")) {
		t.Error("kustomize left an image unset")
	}
	if n := bytes.Count(out, []byte("\nkind: ")); n != 9 {
		t.Errorf("kustomize built %d objects, want 9", n)
	}
	if bin, err := exec.LookPath("kubeconform"); err == nil || fileExists("../bin/kubeconform") {
		if err != nil {
			bin = "../bin/kubeconform"
		}
		runKubeconform(t, bin, out)
	} else {
		t.Log("kubeconform not installed (make bin/kubeconform): schema check not run")
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// runKubeconform checks the built manifests against the Kubernetes JSON
// schemas in SLUICE_KUBE_SCHEMAS (a kubeconform -schema-location, e.g. a
// folder of yannh/kubernetes-json-schema); kubeconform's default fetches
// them from the internet, which this machine cannot reach.
func runKubeconform(t *testing.T, bin string, manifests []byte) {
	t.Helper()
	loc := os.Getenv("SLUICE_KUBE_SCHEMAS")
	if loc == "" {
		t.Log("kubeconform: no schemas offline (set SLUICE_KUBE_SCHEMAS to a local schema folder); not run")
		return
	}
	cmd := exec.Command(bin, "-strict", "-summary", "-ignore-missing-schemas", "-schema-location", loc, "-")
	cmd.Stdin = bytes.NewReader(manifests)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubeconform: %v\n%s", err, out)
	}
}

func envNamesOf(t *testing.T, container any) []string {
	var names []string
	for _, e := range get(t, container, "env").([]any) {
		names = append(names, e.(map[string]any)["name"].(string))
	}
	return names
}
