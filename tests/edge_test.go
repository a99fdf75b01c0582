package tests

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// edgeData writes small tables with NULLs, duplicate keys and an empty
// table as Parquet (through DuckDB) and returns their folder.
func edgeData(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db := openDuck(t, dataDir(t, *sfFlag)) // any DuckDB handle will do
	tables := map[string]string{
		"t1": `SELECT * FROM (VALUES
			(1, 'a', 10.50::DECIMAL(15,2), DATE '2020-01-01'),
			(2, NULL, NULL, NULL),
			(NULL, 'c', 3.25::DECIMAL(15,2), DATE '2021-06-30'),
			(2, 'b', 1.00::DECIMAL(15,2), DATE '2020-01-01'),
			(3, 'a', NULL, DATE '2019-12-31'),
			(NULL, NULL, 7.00::DECIMAL(15,2), NULL)) t(k, s, d, dt)`,
		"t2": `SELECT * FROM (VALUES
			(2, 'x'), (2, 'y'), (NULL, 'n'), (4, 'z'), (1, NULL)) t(k, v)`,
		"t3":    `SELECT * FROM (VALUES (2, 'x'), (4, 'z')) t(k, v)`,
		"empty": `SELECT * FROM (VALUES (1, 'a')) t(k, v) WHERE k < 0`,
	}
	for name, q := range tables {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name, name+".parquet")
		if _, err := db.Exec("COPY (" + q + ") TO '" + p + "' (FORMAT parquet)"); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
	}
	return dir
}

func openDuckDir(t *testing.T, dir string, tables ...string) *sql.DB {
	t.Helper()
	db := openDuck(t, dataDir(t, *sfFlag))
	for _, name := range tables {
		if _, err := db.Exec("CREATE OR REPLACE VIEW " + name + " AS SELECT * FROM read_parquet('" +
			filepath.Join(dir, name, "*.parquet") + "')"); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// TestEdgeCases: NULL join keys, empty tables and join sides, duplicate
// keys, all-NULL groups, LIMIT 0, ORDER BY with ties and NULLs, NOT IN
// with NULLs, against DuckDB, adaptive and static.
func TestEdgeCases(t *testing.T) {
	dir := edgeData(t)
	db := openDuckDir(t, dir, "t1", "t2", "t3", "empty")
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	cases := []query{
		{"null-groups", `select s, count(*) as n, sum(d) as sd, min(dt) as mn, count(d) as cd from t1 group by s`, false},
		{"all-null-aggregates", `select sum(d) as s, min(dt) as m, count(d) as c, count(*) as n, avg(d) as a from t1 where d is null`, true},
		{"limit-0", `select * from t1 limit 0`, true},
		{"order-nulls-first", `select k, s from t1 order by k nulls first, s desc nulls last`, true},
		{"order-desc-default-nulls", `select k, dt from t1 order by k desc, dt`, true},
		{"empty-scan", `select count(*) as n, sum(k) as s from empty`, true},
		{"empty-group", `select k, count(*) from empty group by k`, false},
		{"inner-null-keys", `select t1.k, t1.s, t2.v from t1 join t2 on t1.k = t2.k`, false},
		{"left-join", `select t1.k, t1.s, t2.v from t1 left join t2 on t1.k = t2.k`, false},
		{"right-join", `select t1.k, t2.k, t2.v from t1 right join t2 on t1.k = t2.k`, false},
		{"full-join", `select t1.k, t1.s, t2.k, t2.v from t1 full join t2 on t1.k = t2.k`, false},
		{"join-empty-side", `select t1.k, empty.v from t1 join empty on t1.k = empty.k`, false},
		{"left-join-empty-side", `select t1.k, empty.v from t1 left join empty on t1.k = empty.k`, false},
		{"in-subquery", `select k, s from t1 where k in (select k from t2)`, false},
		{"not-in-with-nulls", `select k, s from t1 where k not in (select k from t2)`, false},
		{"not-in-without-nulls", `select k, s from t1 where k not in (select k from t3)`, false},
		{"exists", `select k, s from t1 where exists (select * from t2 where t2.k = t1.k and t2.v <> 'x')`, false},
		{"not-exists", `select k, s from t1 where not exists (select * from t2 where t2.k = t1.k)`, false},
		{"duplicate-keys-agg", `select t1.k, count(*) as n from t1 join t2 on t1.k = t2.k group by t1.k`, false},
	}
	checkModes(t, st, db, cases)
}
