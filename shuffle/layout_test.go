package shuffle_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

func TestKeyBuilders(t *testing.T) {
	cases := []struct {
		prefix  string
		wantAP  string
		wantJob string
	}{
		{"", "jobs/q1/stage-2/task-3/a4/", "jobs/q1/"},
		{"warehouse", "warehouse/jobs/q1/stage-2/task-3/a4/", "warehouse/jobs/q1/"},
		{"warehouse/", "warehouse/jobs/q1/stage-2/task-3/a4/", "warehouse/jobs/q1/"},
		{"/a/b/", "a/b/jobs/q1/stage-2/task-3/a4/", "a/b/jobs/q1/"},
	}
	for _, c := range cases {
		if got := shuffle.JobPrefix(c.prefix, "q1"); got != c.wantJob {
			t.Errorf("JobPrefix(%q) = %q, want %q", c.prefix, got, c.wantJob)
		}
		ap := shuffle.AttemptPrefix(c.prefix, "q1", 2, 3, 4)
		if ap != c.wantAP {
			t.Errorf("AttemptPrefix(%q) = %q, want %q", c.prefix, ap, c.wantAP)
		}
		if got, want := shuffle.StagePrefix(c.prefix, "q1", 2), strings.TrimSuffix(c.wantAP, "task-3/a4/"); got != want {
			t.Errorf("StagePrefix = %q, want %q", got, want)
		}
		for _, key := range []string{shuffle.PartKey(ap, 17), shuffle.ManifestKey(ap)} {
			if err := objstore.ValidateKey(key); err != nil {
				t.Errorf("built key %q is not a valid object key: %v", key, err)
			}
			k, err := shuffle.ParseKey(key)
			if err != nil {
				t.Fatalf("ParseKey(%q): %v", key, err)
			}
			if k.Job != "q1" || k.Stage != 2 || k.Task != 3 || k.Attempt != 4 || k.AttemptPrefix() != ap {
				t.Errorf("ParseKey(%q) = %+v", key, k)
			}
			if strings.HasSuffix(key, ".arrow") && (k.Part != 17 || k.Manifest) {
				t.Errorf("ParseKey(%q) part = %d manifest = %v", key, k.Part, k.Manifest)
			}
			if strings.HasSuffix(key, shuffle.ManifestName) && (k.Part != -1 || !k.Manifest) {
				t.Errorf("ParseKey(%q) part = %d manifest = %v", key, k.Part, k.Manifest)
			}
		}
		k, err := shuffle.ParseAttemptPrefix(ap)
		if err != nil || k.AttemptPrefix() != ap {
			t.Errorf("ParseAttemptPrefix(%q) = %+v, %v", ap, k, err)
		}
	}
	// PartKey and ManifestKey accept a prefix without trailing slash.
	if got := shuffle.PartKey("jobs/j/stage-0/task-0/a0", 1); got != "jobs/j/stage-0/task-0/a0/part-1.arrow" {
		t.Errorf("PartKey without slash = %q", got)
	}
}

func TestParseKeyRejects(t *testing.T) {
	bad := []string{
		"",
		"part-1.arrow",
		"jobs/q1/stage-1/task-1/a1/other.txt",
		"jobs/q1/stage-1/task-1/a1/part-x.arrow",
		"jobs/q1/stage-1/task-1/a1/part-01.arrow",
		"jobs/q1/stage-1/task-1/a1/part--1.arrow",
		"jobs/q1/stage-01/task-1/a1/part-1.arrow",
		"jobs/q1/stage-1/task-+1/a1/part-1.arrow",
		"jobs/q1/stage-1/task-1/b1/part-1.arrow",
		"jobs/q1/stage-1/task-1/a99999999999/part-1.arrow",
		"nojobs/q1/stage-1/task-1/a1/part-1.arrow",
		"jobs/q.1/stage-1/task-1/a1/part-1.arrow",
		"jobs/q1/plans/1-r0.json",
	}
	for _, key := range bad {
		if k, err := shuffle.ParseKey(key); err == nil || !errors.Is(err, shuffle.ErrInvalidKey) {
			t.Errorf("ParseKey(%q) = %+v, %v; want ErrInvalidKey", key, k, err)
		}
	}
}

func TestValidateJobID(t *testing.T) {
	cases := []struct {
		job string
		ok  bool
	}{
		{"q1", true},
		{"Job_2024-01-01_abc", true},
		{strings.Repeat("a", shuffle.MaxJobIDLen), true},
		{strings.Repeat("a", shuffle.MaxJobIDLen+1), false},
		{"", false},
		{"a/b", false},
		{"a.b", false},
		{"..", false},
		{"a b", false},
		{"é", false},
		{"a\n", false},
	}
	for _, c := range cases {
		err := shuffle.ValidateJobID(c.job)
		if (err == nil) != c.ok {
			t.Errorf("ValidateJobID(%q) = %v, want ok=%v", c.job, err, c.ok)
		}
		if err != nil && !errors.Is(err, shuffle.ErrInvalidKey) {
			t.Errorf("ValidateJobID(%q) error does not match ErrInvalidKey", c.job)
		}
	}
}

func TestParseCompression(t *testing.T) {
	for _, c := range []struct {
		in   string
		want shuffle.Compression
		err  bool
	}{
		{"", shuffle.DefaultCompression, false},
		{"lz4", shuffle.CompressionLZ4, false},
		{"ZSTD", shuffle.CompressionZstd, false},
		{"none", shuffle.CompressionNone, false},
		{"snappy", "", true},
	} {
		got, err := shuffle.ParseCompression(c.in)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("ParseCompression(%q) = %q, %v; want %q, error %v", c.in, got, err, c.want, c.err)
		}
	}
}
