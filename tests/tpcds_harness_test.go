package tests

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// The TPC-DS harness: DuckDB's own tpcds extension (dsdgen and the 99
// query texts) built offline from the static library the duckdb-go
// bindings ship, loaded into a test-only DuckDB, and used to write the
// tables as Parquet. Everything is cached under the repository's .tmp, so
// the extension is linked once per machine and the data once per scale
// factor. DuckDB stays a test oracle: none of this is linked into sluice.

var tpcdsSF = flag.Float64("tpcds-sf", 0.01, "TPC-DS scale factor of TestTPCDS and BenchmarkTPCDS")

// tpcdsTables are the 24 TPC-DS tables dsdgen creates.
var tpcdsTables = []string{
	"call_center", "catalog_page", "catalog_returns", "catalog_sales", "customer",
	"customer_address", "customer_demographics", "date_dim", "household_demographics",
	"income_band", "inventory", "item", "promotion", "reason", "ship_mode", "store",
	"store_returns", "store_sales", "time_dim", "warehouse", "web_page", "web_returns",
	"web_sales", "web_site",
}

// tpcdsQuery is one of the 99 queries as DuckDB ships them.
type tpcdsQuery struct {
	Nr  int    `json:"nr"`
	SQL string `json:"sql"`
}

func (q tpcdsQuery) name() string { return fmt.Sprintf("q%02d", q.Nr) }

// tmpDir is the repository's .tmp folder (gitignored).
func tmpDir(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".tmp"))
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// bindingsLibDir finds the duckdb-go-bindings static libraries for this
// platform in the Go module cache (downloading the module if needed).
func bindingsLibDir(tb testing.TB) string {
	tb.Helper()
	const mod = "github.com/duckdb/duckdb-go-bindings/lib/linux-amd64"
	out, err := exec.Command("go", "list", "-m", "-json", mod).Output()
	if err != nil {
		tb.Fatalf("go list -m %s: %v", mod, err)
	}
	var m struct{ Dir, Version string }
	if err := json.Unmarshal(out, &m); err != nil {
		tb.Fatal(err)
	}
	if m.Dir == "" {
		out, err := exec.Command("go", "mod", "download", "-json", mod+"@"+m.Version).Output()
		if err != nil {
			tb.Fatalf("go mod download %s: %v", mod, err)
		}
		if err := json.Unmarshal(out, &m); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(m.Dir, "libtpcds_extension.a")); err != nil {
		tb.Fatalf("tpcds extension library: %v", err)
	}
	return m.Dir
}

// duckVersion is the version string of the linked DuckDB ("v1.5.6"): a
// C++-ABI extension loads only into exactly the version it names.
func duckVersion(tb testing.TB) string {
	tb.Helper()
	conn, err := duckdb.NewConnector("", nil)
	if err != nil {
		tb.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var v string
	if err := db.QueryRow("SELECT version()").Scan(&v); err != nil {
		tb.Fatal(err)
	}
	return v
}

// extensionFooter is DuckDB's extension metadata (the layout of its
// scripts/append_metadata.cmake): a WebAssembly custom section named
// duckdb_signature whose 512-byte payload is eight 32-byte fields in
// reverse order (metadata version, platform, DuckDB version, extension
// version, ABI type, three unused), then a 256-byte signature, all zero
// for an unsigned extension.
func extensionFooter(platform, version string) []byte {
	field := func(s string) []byte {
		b := make([]byte, 32)
		copy(b, s)
		return b
	}
	var f bytes.Buffer
	// Custom section (id 0) of 531 bytes (LEB128 0x93 0x04): the name's
	// length, the name, the payload's length (512, LEB128 0x80 0x04).
	f.Write([]byte{0x00, 0x93, 0x04, 16})
	f.WriteString("duckdb_signature")
	f.Write([]byte{0x80, 0x04})
	fields := []string{"4", platform, version, version, "CPP", "", "", ""}
	for i := len(fields) - 1; i >= 0; i-- {
		f.Write(field(fields[i]))
	}
	f.Write(make([]byte, 256))
	return f.Bytes()
}

// tpcdsExtension links (once) the tpcds extension into a loadable
// .duckdb_extension under .tmp and returns its absolute path.
func tpcdsExtension(tb testing.TB) string {
	tb.Helper()
	version := duckVersion(tb)
	dir := filepath.Join(tmpDir(tb), "duckdb-ext", version)
	path := filepath.Join(dir, "tpcds.duckdb_extension")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	lib := filepath.Join(bindingsLibDir(tb), "libtpcds_extension.a")
	so := filepath.Join(dir, fmt.Sprintf("tpcds-%d.so", os.Getpid()))
	cmd := exec.Command("g++", "-shared", "-fPIC", "-Wl,--whole-archive", lib, "-Wl,--no-whole-archive", "-o", so)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("link tpcds extension (needs g++): %v\n%s", err, out)
	}
	defer os.Remove(so)
	b, err := os.ReadFile(so)
	if err != nil {
		tb.Fatal(err)
	}
	b = append(b, extensionFooter("linux_amd64", version)...)
	tmp := path + fmt.Sprintf(".%d", os.Getpid())
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
	return path
}

// openDuckTPCDS opens a DuckDB that may load the unsigned tpcds extension
// (the setting is only accepted when the database opens) and loads it.
func openDuckTPCDS(tb testing.TB) *sql.DB {
	tb.Helper()
	ext := tpcdsExtension(tb)
	conn, err := duckdb.NewConnector("?allow_unsigned_extensions=true", nil)
	if err != nil {
		tb.Fatal(err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1) // the extension is loaded per database, views per connection stay visible
	if _, err := db.Exec(fmt.Sprintf("LOAD '%s'", ext)); err != nil {
		db.Close()
		tb.Fatalf("duckdb: load %s: %v", ext, err)
	}
	return db
}

// tpcdsData generates (once per scale factor, cached under .tmp) the 24
// tables as Parquet, DIR/<table>/<table>.parquet with small row groups so
// scans split into several tasks, and the 99 queries as queries.json.
func tpcdsData(tb testing.TB, sf float64) (string, []tpcdsQuery) {
	tb.Helper()
	root := filepath.Join(tmpDir(tb), fmt.Sprintf("tpcds-sf%g", sf))
	if _, err := os.Stat(filepath.Join(root, ".complete")); err != nil {
		os.RemoveAll(root)
		generateTPCDS(tb, root, sf)
	}
	b, err := os.ReadFile(filepath.Join(root, "queries.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var qs []tpcdsQuery
	if err := json.Unmarshal(b, &qs); err != nil {
		tb.Fatal(err)
	}
	return root, qs
}

func generateTPCDS(tb testing.TB, root string, sf float64) {
	tb.Helper()
	db := openDuckTPCDS(tb)
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf("CALL dsdgen(sf=%g)", sf)); err != nil {
		tb.Fatalf("duckdb: dsdgen(sf=%g): %v", sf, err)
	}
	rowGroup := tpcdsRowGroup(sf)
	for _, t := range tpcdsTables {
		dir := filepath.Join(root, t)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		q := fmt.Sprintf("COPY %s TO '%s' (FORMAT parquet, ROW_GROUP_SIZE %d)", t, filepath.Join(dir, t+".parquet"), rowGroup)
		if _, err := db.Exec(q); err != nil {
			tb.Fatalf("duckdb: %s: %v", q, err)
		}
	}
	rs, err := db.Query("SELECT query_nr, query FROM tpcds_queries() ORDER BY query_nr")
	if err != nil {
		tb.Fatalf("duckdb: tpcds_queries(): %v", err)
	}
	var qs []tpcdsQuery
	for rs.Next() {
		var q tpcdsQuery
		if err := rs.Scan(&q.Nr, &q.SQL); err != nil {
			tb.Fatal(err)
		}
		qs = append(qs, q)
	}
	if err := errors.Join(rs.Err(), rs.Close()); err != nil {
		tb.Fatal(err)
	}
	b, err := json.MarshalIndent(qs, "", " ")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "queries.json"), b, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".complete"), nil, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// tpcdsRowGroup is the Parquet row group size the tables are written with:
// small at small scale so scans split into several tasks.
func tpcdsRowGroup(sf float64) int {
	if sf >= 0.1 {
		return 122880
	}
	return 4096
}

// tpcdsDateKeys are the fact tables and the date key each is clustered by
// in the clustered layout.
var tpcdsDateKeys = map[string]string{
	"store_sales": "ss_sold_date_sk", "store_returns": "sr_returned_date_sk",
	"catalog_sales": "cs_sold_date_sk", "catalog_returns": "cr_returned_date_sk",
	"web_sales": "ws_sold_date_sk", "web_returns": "wr_returned_date_sk", "inventory": "inv_date_sk",
}

// tpcdsClustered writes (once per scale factor, cached under .tmp) the
// same tables in the layout lakehouse fact tables usually have: each fact
// table sorted by its date key, the way Spark's TPC-DS kit partitions them
// by it and Iceberg or Delta tables are sorted or clustered by it, so a
// row group covers a few weeks of sales rather than all five years as in
// dsdgen's order. The dimension tables are the same files (hard links).
// The rows are the same; only their order and row groups differ.
func tpcdsClustered(tb testing.TB, sf float64) string {
	tb.Helper()
	src, _ := tpcdsData(tb, sf)
	root := filepath.Join(tmpDir(tb), fmt.Sprintf("tpcds-sf%g-clustered", sf))
	if _, err := os.Stat(filepath.Join(root, ".complete")); err == nil {
		return root
	}
	os.RemoveAll(root)
	db := openDuckOn(tb, src, nil)
	rowGroup := tpcdsRowGroup(sf)
	for _, t := range tpcdsTables {
		dir := filepath.Join(root, t)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		from, to := filepath.Join(src, t, t+".parquet"), filepath.Join(dir, t+".parquet")
		key, fact := tpcdsDateKeys[t]
		if !fact {
			if err := os.Link(from, to); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		q := fmt.Sprintf("COPY (SELECT * FROM read_parquet('%s') ORDER BY %s NULLS LAST) TO '%s' (FORMAT parquet, ROW_GROUP_SIZE %d)", from, key, to, rowGroup)
		if _, err := db.Exec(q); err != nil {
			tb.Fatalf("duckdb: %s: %v", q, err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".complete"), nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	return root
}

// isOrdered reports whether a query's outermost SELECT orders its rows.
func isOrdered(sql string) bool {
	s := strings.ToLower(sql)
	i := strings.LastIndex(s, "order by")
	return i >= 0 && !strings.Contains(s[i:], ")")
}
