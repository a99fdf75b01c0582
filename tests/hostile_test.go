package tests

// End-to-end tests of issue 30, "security and robustness holes a hostile
// tester found": each reproduces an attack or fault against a running
// stack and checks the fixed behaviour.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/local"
)

// bucketKeys lists every key of the stack's bucket.
func bucketKeys(t *testing.T, st *local.Stack) []string {
	t.Helper()
	objs, err := st.Bucket.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	sort.Strings(keys)
	return keys
}

// TestWriteTargetsConfined: COPY TO and CREATE TABLE AS check where they
// write at planning, before anything is written: COPY into another job's
// folder, into a CREATE TABLE AS table's or a registered table's location,
// or to a key the object store refuses, and CTAS of a name that is not a
// table name ("zz/x" appended rows to table zz), fail with SL021 or SL025
// at once, naming the target, and leave the bucket as it was. A COPY
// elsewhere still writes.
func TestWriteTargetsConfined(t *testing.T) {
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dataDir(t, *sfFlag)); err != nil {
		t.Fatal(err)
	}
	b := st.S3.Bucket
	job := run(t, st, "select count(*) from nation", false).Job
	stmt(t, st, "create table zz as select 1 as a")
	stmt(t, st, "create external table ext stored as parquet location 's3://"+b+"/tables/nation/'")
	stmt(t, st, "copy (select n_name from nation) to 's3://"+b+"/data/n/'")
	stmt(t, st, "create external table n2 stored as parquet location 's3://"+b+"/data/n/'")

	cases := []struct {
		name, sql, code, msg string
		pos                  int
	}{
		{"another job's folder", "copy (select 1 as a) to 's3://" + b + "/jobs/" + job + "/'", "SL021", "inside sluice's own data", 25},
		{"the jobs area", "copy (select 1 as a) to 's3://" + b + "/jobs'", "SL021", "inside sluice's own data", 25},
		{"dot-dot into jobs", "copy (select 1 as a) to 's3://" + b + "/x/../jobs/" + job + "/'", "SL021", `contains ".."`, 25},
		{"a CTAS table", "copy (select 1 as a) to 's3://" + b + "/tables/zz/'", "SL021", "inside sluice's own data", 25},
		{"a loaded table", "copy (select 1 as a) to 's3://" + b + "/tables/nation/more/'", "SL021", "tables/", 25},
		{"an external table", "copy (select 1 as a) to 's3://" + b + "/data/n/sub/'", "SL021", "inside the location of table n2", 25},
		{"double slash", "copy (select 1 as a) to 's3://" + b + "/a//b/'", "SL021", `contains "//"`, 25},
		{"dot component", "copy (select 1 as a) to 's3://" + b + "/a/./b/'", "SL021", `"." path component`, 25},
		{"control character", "copy (select 1 as a) to 's3://" + b + "/a\tb/'", "SL021", "want 's3://BUCKET/PREFIX/'", 25},
		{"C1 control character", "copy (select 1 as a) to 's3://" + b + "/a\u0085b/'", "SL021", "control character", 25},
		{"too long", "copy (select 1 as a) to 's3://" + b + "/" + strings.Repeat("k", 1000) + "/'", "SL021", "no room for the file names", 25},
		{"CTAS into another table's folder", `create table "zz/x" as select 2 as a`, "SL025", `CREATE TABLE "zz/x"`, 14},
		{"CTAS with a dot-dot name", `create table "../jobs" as select 2 as a`, "SL025", "invalid table name", 14},
		{"CTAS over an external table's location", `create table nation_copy as select 1 as a`, "", "", 0}, // allowed: its own folder
		{"external table with a bad name", `create external table "a/b" stored as parquet location 's3://` + b + `/data/n/'`, "SL025", "invalid table name", 23},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.code == "" {
				stmt(t, st, c.sql)
				return
			}
			before := bucketKeys(t, st)
			start := time.Now()
			e := stmtErr(t, st, c.sql)
			if e.Code != c.code || e.Position != c.pos || !strings.Contains(e.Msg, c.msg) {
				t.Fatalf("%s\ngot %s (code %s, position %d), want %s at %d containing %q", c.sql, e.Msg, e.Code, e.Position, c.code, c.pos, c.msg)
			}
			if el := time.Since(start); el > 10*time.Second {
				t.Fatalf("refused after %v: not at planning", el)
			}
			if after := bucketKeys(t, st); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Fatalf("the refused statement changed the bucket: %d keys before, %d after", len(before), len(after))
			}
		})
	}
	for q, want := range map[string]string{
		"select count(*), sum(a) from zz": "[[1 1]]",
		"select count(*) from ext":        "[[25]]",
		"select count(*) from n2":         "[[25]]",
	} {
		if got := fmt.Sprint(sluiceRows(run(t, st, q, false))); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
	res := stmt(t, st, "copy (select n_name from nation) to 's3://"+b+"/exports/n/'")
	if got := fmt.Sprint(sluiceRows(res)[0][0]); got != "25" {
		t.Fatalf("COPY to a free prefix: %v", sluiceRows(res))
	}
}
