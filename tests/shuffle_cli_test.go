package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/coordinator"
)

// TestShuffleCLI inspects a finished job's shuffle objects with the CLI as
// a user does: `shuffle ls` lists them, and `shuffle cat` takes the keys it
// prints or s3:// URLs: a manifest is printed as its JSON, a data object
// decoded to rows, whose count equals what the manifest and the listing
// say.
func TestShuffleCLI(t *testing.T) {
	bin := sluiceBin(t)
	dir := dataDir(t, *sfFlag)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	cl := coordinator.NewClient(st.APIURL, "")
	off := false // the static plan keeps the shuffle stage (adaptive may inline it)
	job, err := cl.Submit(context.Background(), "select n_regionkey, count(*) from nation group by n_regionkey", &off)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Wait(context.Background(), job, nil); err != nil {
		t.Fatal(err)
	}
	env := []string{"SLUICE_S3_ENDPOINT=" + st.S3.Endpoint, "SLUICE_S3_BUCKET=" + st.S3.Bucket,
		"AWS_ACCESS_KEY_ID=" + st.S3.AccessKey, "AWS_SECRET_ACCESS_KEY=" + st.S3.SecretKey}
	out, errOut, code := runCLI(t, bin, t.TempDir(), env, "shuffle", "ls", job)
	if code != 0 {
		t.Fatalf("shuffle ls: exit %d: %s", code, errOut)
	}
	var manifest, data string
	var dataRows int64
	for _, line := range strings.Split(out, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 7 {
			continue
		}
		for i, w := range f {
			if !strings.Contains(w, "/") {
				continue
			}
			switch {
			case manifest == "" && strings.Contains(line, "manifest"):
				manifest = w
			case data == "" && strings.HasPrefix(f[3], "data"):
				data = w
				fmt.Sscan(f[i-1], &dataRows)
			}
		}
	}
	if manifest == "" || data == "" {
		t.Fatalf("shuffle ls lists no manifest and data object:\n%s", out)
	}
	t.Logf("manifest %s, data %s (%d rows)", manifest, data, dataRows)
	out, errOut, code = runCLI(t, bin, t.TempDir(), env, "shuffle", "cat", "s3://"+st.S3.Bucket+"/"+manifest)
	var m struct {
		Job           string `json:"job"`
		NumPartitions int    `json:"num_partitions"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m.Job != job || m.NumPartitions < 1 {
		t.Fatalf("shuffle cat of a manifest URL: exit %d, %q %s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, bin, t.TempDir(), env, "shuffle", "cat", "--format", "csv", "s3://"+st.S3.Bucket+"/"+data)
	if code != 0 {
		t.Fatalf("shuffle cat of a data URL: exit %d: %s", code, errOut)
	}
	if rows := int64(strings.Count(strings.TrimSpace(out), "\n")); rows != dataRows { // minus the header line
		t.Errorf("shuffle cat printed %d rows, shuffle ls says %d:\n%s", rows, dataRows, out)
	}
	if _, errOut, code = runCLI(t, bin, t.TempDir(), env, "shuffle", "cat", "s3://"+st.S3.Bucket); code == 0 || !strings.Contains(errOut, "names no object") {
		t.Errorf("shuffle cat s3://bucket: exit %d, %s", code, errOut)
	}
}
