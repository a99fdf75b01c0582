package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/local"
)

// cachedBytes sums what a job's scans read from the functions' range
// cache of table bytes, and what they read in all (exchanges left out).
func cachedBytes(js *coordinator.JobStatus) (cached, read int64) {
	for _, s := range js.Stages {
		if s.Metrics == nil {
			continue
		}
		for _, o := range s.Metrics.Operators {
			if o.Leaf && o.Kind == "scan" {
				cached += o.CachedBytes
				read += o.Bytes
			}
		}
	}
	return cached, read
}

// TestFileCache: the in-process functions keep the table bytes they
// fetched, by file version. A query run again reads its files from memory
// (fewer GETs, bytes_cached in the metrics) with the same answer; a file
// of an external table rewritten in place (same key, other bytes; the
// same size too) is listed anew and read afresh, never from the old
// version's cached bytes. Answers equal DuckDB's over the same files,
// with the cache on and off.
func TestFileCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(mult int) []byte {
		path := filepath.Join(dir, "fc.parquet")
		db := openDuck(t, dataDir(t, *sfFlag))
		if _, err := db.Exec(fmt.Sprintf(`COPY (SELECT i AS k, xor(i, %d) AS v, 'name-' || (i %% 97) AS s FROM range(200000) t(i))
			TO '%s' (FORMAT parquet, ROW_GROUP_SIZE 20000, COMPRESSION uncompressed)`, mult, path)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	q := `select s, count(*) as n, sum(v) as sv, min(k) as lo, max(k) as hi from fc where k % 7 = 3 group by s`
	duckWant := func(data []byte) []row {
		sub := filepath.Join(t.TempDir(), "fc")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "fc.parquet"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		return duckRows(t, openDuckDir(t, filepath.Dir(sub), "fc"), q)
	}
	// Two versions of one size (uncompressed, values of one width): a
	// rewrite that only the ETag tells apart.
	v1, v2 := write(1), write(6)
	if len(v1) != len(v2) {
		t.Fatalf("the two versions differ in size (%d, %d): the same-size case is not covered", len(v1), len(v2))
	}
	want1, want2 := duckWant(v1), duckWant(v2)

	for _, c := range []struct {
		name  string
		cache int64
	}{{"cache", 64 << 20}, {"no cache", 0}} {
		t.Run(c.name, func(t *testing.T) {
			st := startStack(t, "", func(o *local.Options) { o.FileCache = c.cache })
			key := "ext/fc/part-0.parquet"
			if err := st.Bucket.Put(ctx, key, v1); err != nil {
				t.Fatal(err)
			}
			stmt(t, st, fmt.Sprintf("create external table fc stored as parquet location 's3://%s/ext/fc/'", st.S3.Bucket))

			first := run(t, st, q, true)
			compareRows(t, sluiceRows(first), want1, false)
			second := run(t, st, q, true)
			compareRows(t, sluiceRows(second), want1, false)
			cached1, _ := cachedBytes(first.Status)
			cached2, read2 := cachedBytes(second.Status)
			t.Logf("first run: %d bytes from the cache, %d GETs; second: %d of %d bytes read, %d GETs",
				cached1, first.Status.Cost.S3.Get, cached2, read2, second.Status.Cost.S3.Get)
			if c.cache == 0 {
				if cached2 != 0 {
					t.Fatalf("no cache, yet %d bytes from it", cached2)
				}
			} else {
				if cached2 == 0 {
					t.Fatal("the second run read nothing from the cache")
				}
				if second.Status.Cost.S3.Get >= first.Status.Cost.S3.Get {
					t.Fatalf("the second run made %d GETs, the first %d: want fewer", second.Status.Cost.S3.Get, first.Status.Cost.S3.Get)
				}
			}

			// A CSV table's files are cached whole.
			csvPath := filepath.Join(t.TempDir(), "fc.csv")
			db := openDuck(t, dataDir(t, *sfFlag))
			if _, err := db.Exec(fmt.Sprintf(`COPY (SELECT i AS k, i %% 13 AS g FROM range(5000) t(i)) TO '%s' (FORMAT csv, HEADER)`, csvPath)); err != nil {
				t.Fatal(err)
			}
			csvData, err := os.ReadFile(csvPath)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Bucket.Put(ctx, "ext/fccsv/part-0.csv", csvData); err != nil {
				t.Fatal(err)
			}
			stmt(t, st, fmt.Sprintf("create external table fccsv stored as csv location 's3://%s/ext/fccsv/'", st.S3.Bucket))
			cq := `select g, count(*) as n, sum(k) as sk from fccsv group by g`
			cwant := duckRows(t, db, fmt.Sprintf(`select g, count(*) as n, sum(k) as sk from read_csv('%s') group by g`, csvPath))
			for i := range 2 {
				res := run(t, st, cq, true)
				compareRows(t, sluiceRows(res), cwant, false)
				if cached, read := cachedBytes(res.Status); i == 1 && c.cache > 0 && cached != read {
					t.Fatalf("second CSV run: %d of %d bytes from the cache, want all", cached, read)
				}
			}

			// Rewrite the file in place: the next query lists the new
			// version and answers from its bytes.
			if err := st.Bucket.Put(ctx, key, v2); err != nil {
				t.Fatal(err)
			}
			third := run(t, st, q, true)
			compareRows(t, sluiceRows(third), want2, false)
			if c.cache > 0 && st.Runtime.Files.Stats().Bytes == 0 {
				t.Fatal("the cache holds nothing")
			}
		})
	}

	// A file replaced after the query was planned, before its scan read
	// it: SL107 naming the table and the file, not an answer mixing two
	// versions (the invoker puts the new bytes before the first task).
	t.Run("replaced mid-query", func(t *testing.T) {
		key := "ext/fc/part-0.parquet"
		var st *local.Stack
		var once sync.Once
		st = startStack(t, "", func(o *local.Options) {
			o.FileCache = 0
			o.WrapInvoker = func(inv coordinator.Invoker) coordinator.Invoker {
				return invokeFunc(func(ctx context.Context, spec []byte) ([]byte, error) {
					once.Do(func() {
						if err := st.Bucket.Put(ctx, key, v2); err != nil {
							t.Error(err)
						}
					})
					return inv.Invoke(ctx, spec)
				})
			}
		})
		if err := st.Bucket.Put(ctx, key, v1); err != nil {
			t.Fatal(err)
		}
		stmt(t, st, fmt.Sprintf("create external table fc stored as parquet location 's3://%s/ext/fc/'", st.S3.Bucket))
		adaptive := true
		res, err := st.Query(ctx, q, &adaptive, nil)
		if err == nil {
			res.Release()
		}
		if err == nil || !strings.Contains(err.Error(), "SL107") || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "table fc") {
			t.Fatalf("query over a file replaced after planning: %v; want SL107 naming table fc and %s", err, key)
		}
	})
}

// invokeFunc is an Invoker of a function.
type invokeFunc func(ctx context.Context, spec []byte) ([]byte, error)

func (f invokeFunc) Invoke(ctx context.Context, spec []byte) ([]byte, error) { return f(ctx, spec) }
