package tests

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// duckWrite writes the rows of query q to the Parquet file path with
// DuckDB (the files of these tests are as DuckDB writes them).
func duckWrite(t *testing.T, db *sql.DB, q, path string) {
	t.Helper()
	if _, err := db.Exec(fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet)", q, path)); err != nil {
		t.Fatalf("duckdb: write %s: %v", path, err)
	}
}

// TestUnsupportedColumnLeftOut: a Parquet column of a type sluice does
// not read (BLOB, TIME) does not refuse its table: the table registers
// without it, the other columns answer as DuckDB's, and a reference to it
// is SL005 naming the column and its type.
func TestUnsupportedColumnLeftOut(t *testing.T) {
	db := openDuckPlain(t)
	st := startStack(t, "", nil)
	path := filepath.Join(t.TempDir(), "odd.parquet")
	duckWrite(t, db, `select i as id, ('x' || i)::blob as payload, ('10:00:00'::time + to_seconds(i)) as at, 'n' || i as name
		from range(100) t(i)`, path)
	upload(t, st, path, "raw/odd/odd.parquet")
	stmt(t, st, fmt.Sprintf("CREATE EXTERNAL TABLE odd STORED AS PARQUET LOCATION 's3://%s/raw/odd/'", st.S3.Bucket))
	duck := fmt.Sprintf("read_parquet('%s')", path)
	for _, q := range []string{
		`select id, name from %s where id %% 7 = 3`,
		`select count(*), sum(id), max(name) from %s`,
	} {
		got := sluiceRows(run(t, st, fmt.Sprintf(q, "odd"), true))
		if d := rowsDiff(got, duckRows(t, db, fmt.Sprintf(q, duck)), false); d != "" {
			t.Errorf("%s: %s", q, d)
		}
	}
	if got := fmt.Sprint(sluiceRows(run(t, st, "select * from odd where id = 1", true))); got != "[[1 n1]]" {
		t.Errorf("select * leaves the unsupported columns out: got %s", got)
	}
	on := true
	for q, want := range map[string]string{
		"select payload from odd":          `column "payload" of table "odd" has type binary`,
		"select odd.at from odd":           `column "at" of table "odd" has type time64[us]`,
		"select id from odd where at > 1": `column "at" of table "odd" has type time64[us]`,
	} {
		_, err := st.Query(context.Background(), q, &on, nil)
		if !strings.Contains(fmt.Sprint(err), "SL005") || !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("%s: %v, want SL005 %q", q, err, want)
		}
	}
}
