package infra

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"time"
)

// The deployment templates: templates/aws is a Terraform root module for
// AWS, templates/k8s a kustomize base for Kubernetes. Render fills them
// in; infra/aws and infra/k8s are the checked-in renderings of the
// default settings (the test keeps them identical).
//
//go:embed templates
var templates embed.FS

// Targets are the platforms Render knows.
var Targets = []string{"aws", "k8s"}

// Settings are the choices of one deployment. The zero value of a field
// means its default (Defaults); an empty image means the rendered files
// require it as a parameter (a Terraform variable without a default, a
// kustomize image the user sets with kustomize edit set image).
type Settings struct {
	Name          string   // prefix of every resource name (default "sluice")
	Namespace     string   // Kubernetes namespace (default "sluice")
	Region        string   // AWS region (default "us-east-1")
	Bucket        string   // bucket of sluice's objects (default "<name>-data" on AWS, "sluice" on Kubernetes)
	S3Endpoint    string   // Kubernetes: S3-compatible endpoint (default the in-cluster MinIO address)
	TablePrefixes []string // key prefixes of tables in the bucket, each ending in "/" (default "tables/")
	// WritePrefixes are the key prefixes statements may write (default
	// "tables/", where CREATE TABLE AS writes, and "exports/" for COPY TO).
	WritePrefixes []string
	// FunctionPackage is the Lambda package's path relative to the
	// rendered folder (default ../../bin/lambda/<arch>/function.zip, right
	// for the checked-in infra/aws).
	FunctionPackage  string
	CoordinatorImage string
	FunctionImage    string
	FunctionArch     string        // Lambda: arm64 (default) or x86_64
	FunctionMemoryMB int           // memory of one function (default 2048)
	Functions        int           // concurrent functions per coordinator (default 100 on AWS, 20 on Kubernetes)
	Coordinators     int           // coordinator replicas (default 2)
	Retention        time.Duration // delete a finished job's objects after this (default 24h)
	LifecycleDays    int           // bucket rule expiring jobs/ objects, the backstop of GC (default 7)
	Prices           string        // --prices of the cost report (default: AWS list prices)
}

// CTASPrefix is the key prefix under which CREATE TABLE AS writes its
// tables (coordinator/sqlsession: tables/<name>/): a write prefix of every
// deployment that allows CTAS.
const CTASPrefix = "tables/"

// FunctionPackagePath is where `make function` leaves the Lambda package
// of arch (arm64 or x86_64), relative to the repository root.
func FunctionPackagePath(arch string) string {
	dir := "arm64"
	if arch == "x86_64" {
		dir = "amd64"
	}
	return "bin/lambda/" + dir + "/function.zip"
}

// File is one rendered file.
type File struct {
	Path string // relative to the output folder
	Data []byte
}

// Defaults returns s with every unset field set to its default for target.
func Defaults(target string, s Settings) Settings {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&s.Name, "sluice")
	def(&s.Namespace, "sluice")
	def(&s.Region, "us-east-1")
	def(&s.FunctionArch, "arm64")
	if target == "aws" {
		def(&s.Bucket, s.Name+"-data")
	} else {
		def(&s.Bucket, "sluice")
		def(&s.S3Endpoint, "http://minio."+s.Namespace+".svc.cluster.local:9000")
	}
	if len(s.TablePrefixes) == 0 {
		s.TablePrefixes = []string{"tables/"}
	}
	if len(s.WritePrefixes) == 0 {
		s.WritePrefixes = []string{CTASPrefix, "exports/"}
	}
	if s.FunctionPackage == "" {
		s.FunctionPackage = "../../" + FunctionPackagePath(s.FunctionArch)
	}
	if s.FunctionMemoryMB == 0 {
		s.FunctionMemoryMB = 2048
	}
	if s.Functions == 0 {
		s.Functions = map[bool]int{true: 100, false: 20}[target == "aws"]
	}
	if s.Coordinators == 0 {
		s.Coordinators = 2
	}
	if s.Retention == 0 {
		s.Retention = 24 * time.Hour
	}
	if s.LifecycleDays == 0 {
		s.LifecycleDays = 7
	}
	return s
}

var (
	namePattern   = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}[a-z0-9]$`)
	bucketPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	prefixPattern = regexp.MustCompile(`^[A-Za-z0-9!_.*'()-][A-Za-z0-9!_.*'()/-]*/$`)
)

// ErrSettings is matched (errors.Is) by every error of a bad setting.
var ErrSettings = errors.New("invalid deployment setting")

func (s Settings) validate(target string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrSettings, fmt.Sprintf(format, args...))
	}
	if !slices.Contains(Targets, target) {
		return bad("target %q: want one of %s", target, strings.Join(Targets, ", "))
	}
	if !namePattern.MatchString(s.Name) {
		return bad("name %q: want 2 to 32 lower-case letters, digits and dashes, starting with a letter", s.Name)
	}
	if !namePattern.MatchString(s.Namespace) {
		return bad("namespace %q: want 2 to 32 lower-case letters, digits and dashes, starting with a letter", s.Namespace)
	}
	if !bucketPattern.MatchString(s.Bucket) {
		return bad("bucket %q: not a valid S3 bucket name", s.Bucket)
	}
	for _, p := range s.TablePrefixes {
		if !prefixPattern.MatchString(p) || strings.HasPrefix(p, "jobs/") || strings.Contains(p, "//") {
			return bad("table prefix %q: want a key prefix ending in / outside jobs/ (e.g. tables/)", p)
		}
	}
	for _, p := range s.WritePrefixes {
		if !prefixPattern.MatchString(p) || strings.HasPrefix(p, "jobs/") || strings.Contains(p, "//") {
			return bad("write prefix %q: want a key prefix ending in / outside jobs/ (e.g. exports/)", p)
		}
	}
	if strings.ContainsAny(s.FunctionPackage, "\n\"\\") {
		return bad("function package %q: contains a newline, quote or backslash", s.FunctionPackage)
	}
	if s.FunctionArch != "arm64" && s.FunctionArch != "x86_64" {
		return bad("function arch %q: want arm64 or x86_64", s.FunctionArch)
	}
	if s.FunctionMemoryMB < 128 || s.FunctionMemoryMB > 10240 {
		return bad("function memory %d MB: want 128 to 10240", s.FunctionMemoryMB)
	}
	if s.Functions < 1 || s.Functions > 10000 {
		return bad("functions %d: want 1 to 10000", s.Functions)
	}
	if s.Coordinators < 1 || s.Coordinators > 100 {
		return bad("coordinators %d: want 1 to 100", s.Coordinators)
	}
	if s.Retention < 0 || s.LifecycleDays < 1 {
		return bad("retention %s, lifecycle %d days: want a positive retention and at least 1 day", s.Retention, s.LifecycleDays)
	}
	if s.Retention > time.Duration(s.LifecycleDays)*24*time.Hour {
		return bad("retention %s is longer than the %d-day lifecycle rule: the rule would delete objects GC still keeps", s.Retention, s.LifecycleDays)
	}
	for _, img := range []string{s.CoordinatorImage, s.FunctionImage} {
		if strings.ContainsAny(img, " \t\n\"'\\") {
			return bad("image %q: contains a space or quote", img)
		}
	}
	if strings.ContainsAny(s.Prices, "\n\"\\") || strings.ContainsAny(s.S3Endpoint, " \n\"\\") || strings.ContainsAny(s.Region, " \n\"\\") {
		return bad("prices, endpoint or region contain a newline, quote or backslash")
	}
	return nil
}

// Render fills in the templates of target ("aws" or "k8s") with s (its
// unset fields defaulted), in path order.
func Render(target string, s Settings) ([]File, error) {
	s = Defaults(target, s)
	if err := s.validate(target); err != nil {
		return nil, err
	}
	root := path.Join("templates", target)
	funcs := template.FuncMap{
		"quote":    func(v string) string { return fmt.Sprintf("%q", v) },
		"duration": shortDuration,
		"hclList": func(vs []string) string {
			q := make([]string, len(vs))
			for i, v := range vs {
				q[i] = fmt.Sprintf("%q", v)
			}
			return "[" + strings.Join(q, ", ") + "]"
		},
		"mib":         func(mb int) string { return fmt.Sprintf("%dMiB", mb) },
		"imageName":   func(ref string) string { n, _, _ := splitImage(ref); return n },
		"imageTag":    func(ref string) string { _, t, _ := splitImage(ref); return t },
		"imageDigest": func(ref string) string { _, _, d := splitImage(ref); return d },
	}
	var files []File
	err := fs.WalkDir(templates, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		src, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(p, root+"/"), ".tmpl")
		t, err := template.New(rel).Funcs(funcs).Option("missingkey=error").Parse(string(src))
		if err != nil {
			return fmt.Errorf("template %s: %w", p, err)
		}
		var out bytes.Buffer
		if err := t.Execute(&out, s); err != nil {
			return fmt.Errorf("template %s: %w", p, err)
		}
		files = append(files, File{Path: rel, Data: out.Bytes()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// splitImage splits an image reference into name, tag and digest:
// registry:5000/repo/img:tag@sha256:... (tag and digest optional).
func splitImage(ref string) (name, tag, digest string) {
	name, digest, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	return name, tag, digest
}

// shortDuration formats d as time.Duration.String without zero minutes
// and seconds: 24h, 1h30m, 90s -> 1m30s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
