package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicedb/sluice/local"
)

// TestGroupByDictionary: GROUP BY a string column that DuckDB's writer
// dictionary-encodes (the scan hands it to the partial aggregation as
// indices) answers as DuckDB does: NULL keys, several files and row groups
// each with its own dictionary, a file whose strings are plain-encoded in
// the same table, a second key, a key that is also an argument or is
// filtered on (read as plain strings), adaptive and static.
func TestGroupByDictionary(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "ev"), 0o755); err != nil {
		t.Fatal(err)
	}
	db := openDuckOn(t, dir, nil)
	files := []string{
		// low cardinality, NULLs, a different value set per file
		`SELECT CASE WHEN i %% 17 = 3 THEN NULL ELSE 'seg_' || (hash(i) %% 40 + %d) END AS s, i %% 5 AS k, i %% 1000 AS v FROM range(%d, %d) t(i)`,
		`SELECT CASE WHEN i %% 17 = 3 THEN NULL ELSE 'seg_' || (hash(i) %% 40 + %d) END AS s, i %% 5 AS k, i %% 1000 AS v FROM range(%d, %d) t(i)`,
		// unique strings: DuckDB writes them plain
		`SELECT 'uniq_' || i || '_' || %d AS s, i %% 5 AS k, i %% 1000 AS v FROM range(%d, %d) t(i)`,
	}
	const per = 60_000
	for f, sel := range files {
		q := fmt.Sprintf(sel, f*20, f*per, (f+1)*per)
		copyQ := fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet, ROW_GROUP_SIZE 10000)", q, filepath.Join(dir, "ev", fmt.Sprintf("p%d.parquet", f)))
		if _, err := db.Exec(copyQ); err != nil {
			t.Fatalf("duckdb: %v\n%s", err, copyQ)
		}
	}
	if _, err := db.Exec(fmt.Sprintf("CREATE VIEW ev AS SELECT * FROM read_parquet('%s/*.parquet')", filepath.Join(dir, "ev"))); err != nil {
		t.Fatal(err)
	}
	st := startStack(t, "", func(o *local.Options) { o.Coordinator.SplitBytes = 64 << 10 })
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	checkModes(t, st, db, []query{
		{name: "one_key", sql: "select s, count(*), sum(v), min(v), max(k) from ev group by s"},
		{name: "two_keys", sql: "select s, k, count(*), sum(v) from ev group by s, k"},
		{name: "key_first_second", sql: "select k, s, avg(v) from ev group by k, s"},
		{name: "low_only", sql: "select s, count(*) from ev where k = 2 group by s"},
		{name: "key_is_argument", sql: "select s, count(*), min(s), max(length(s)) from ev group by s"},
		{name: "having", sql: "select s, sum(v) from ev group by s having count(*) > 1000"},
		{name: "distinct", sql: "select count(*) from (select distinct s from ev)"},
		{name: "count_distinct", sql: "select k, count(distinct s) from ev group by k"},
		{name: "empty", sql: "select s, count(*) from ev where v < 0 group by s"},
	})
}
