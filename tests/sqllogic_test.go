package tests

import (
	"bufio"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/local"
)

// The SQL corpus: sqllogictest-style files under testdata/sql/*.slt, run
// against the embedded stack over the TPC-H test tables (SF -sf).
//
//	# a comment
//	query <types> [rowsort|nosort] [sluice-only]
//	SELECT ...
//	----
//	value<TAB>value
//	...
//	(a blank line ends the record)
//
//	statement error SL004
//	SELECT ...
//
// <types> has one letter per column (I integer, R real or decimal, T text,
// D date, B boolean). Values render as NULL, true/false, integers without a
// fraction, other numbers with up to 10 significant digits, dates as
// YYYY-MM-DD and the empty string as (empty). rowsort compares the rows
// sorted, nosort (the default) in order.
//
// Every query's expectation is DuckDB's answer on the same Parquet files:
// the test checks the file against DuckDB as well as against sluice, so an
// expectation cannot drift from the oracle; -slt-update rewrites the
// expected rows from DuckDB. A record marked sluice-only (a deliberate
// difference, documented in the README) is not checked against DuckDB.
// `statement error <code>` records expect sluice to fail with that code.

var sltUpdate = flag.Bool("slt-update", false, "rewrite the expected rows of testdata/sql/*.slt from DuckDB")

type sltRecord struct {
	file, name string
	line       int
	kind       string // "query" or "error"
	types      string
	sort       string
	sluiceOnly bool
	code       string
	sql        string
	want       []string
	// header is the record's first line, kept for -slt-update.
	header string
}

func parseSLT(path string) ([]*sltRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []*sltRecord
	var cur *sltRecord
	inResult := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	flush := func() {
		if cur != nil {
			cur.sql = strings.TrimSpace(cur.sql)
			recs = append(recs, cur)
		}
		cur, inResult = nil, false
	}
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case cur == nil && (strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#")):
			continue
		case cur == nil:
			fields := strings.Fields(text)
			cur = &sltRecord{file: filepath.Base(path), line: line, header: text}
			switch {
			case fields[0] == "query" && len(fields) >= 2:
				cur.kind, cur.types, cur.sort = "query", fields[1], "nosort"
				for _, x := range fields[2:] {
					switch x {
					case "rowsort", "nosort":
						cur.sort = x
					case "sluice-only":
						cur.sluiceOnly = true
					default:
						return nil, fmt.Errorf("%s:%d: unknown query option %q", path, line, x)
					}
				}
			case fields[0] == "statement" && len(fields) == 3 && fields[1] == "error":
				cur.kind, cur.code = "error", fields[2]
			default:
				return nil, fmt.Errorf("%s:%d: want `query <types> [sort]` or `statement error <code>`, got %q", path, line, text)
			}
			cur.name = fmt.Sprintf("%s:%d", cur.file, line)
		case strings.TrimSpace(text) == "":
			flush()
		case text == "----" && cur.kind == "query":
			inResult = true
		case inResult:
			cur.want = append(cur.want, text)
		default:
			cur.sql += text + "\n"
		}
	}
	flush()
	return recs, sc.Err()
}

// renderValue renders a normalized value (see row) as the corpus does.
func renderValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return strconv.FormatFloat(x, 'g', 10, 64)
	case string:
		if x == "" {
			return "(empty)"
		}
		return x
	}
	return fmt.Sprint(v)
}

func renderRows(rs []row, sortMode string) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		cells := make([]string, len(r))
		for c, v := range r {
			cells[c] = renderValue(v)
		}
		out[i] = strings.Join(cells, "\t")
	}
	if sortMode == "rowsort" {
		sort.Strings(out)
	}
	return out
}

func sltFiles(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "sql", "*.slt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/sql/*.slt files")
	}
	return files
}

// TestSQLLogic runs the corpus against sluice (adaptive) and checks every
// expectation against DuckDB.
func TestSQLLogic(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	for _, path := range sltFiles(t) {
		recs, err := parseSLT(path)
		if err != nil {
			t.Fatal(err)
		}
		if *sltUpdate {
			if err := updateSLT(path, recs, db); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			for _, r := range recs {
				runSLTRecord(t, st, db, r)
			}
		})
	}
}

func runSLTRecord(t *testing.T, st *local.Stack, db *sql.DB, r *sltRecord) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adaptive := true
	res, err := st.Query(ctx, r.sql, &adaptive, nil)
	if r.kind == "error" {
		if err == nil {
			res.Release()
			t.Errorf("%s: sluice ran without error, want %s\n%s", r.name, r.code, r.sql)
		} else if !strings.Contains(err.Error(), r.code) {
			t.Errorf("%s: sluice failed with %v, want %s\n%s", r.name, err, r.code, r.sql)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: sluice: %v\n%s", r.name, err, r.sql)
		return
	}
	defer res.Release()
	got := renderRows(sluiceRows(res), r.sort)
	if len(res.Records) > 0 && int(res.Records[0].NumCols()) != len(r.types) {
		t.Errorf("%s: sluice returned %d columns, the record declares %d (%s)", r.name, res.Records[0].NumCols(), len(r.types), r.types)
	}
	if !equalLines(got, r.want) {
		t.Errorf("%s: sluice differs from the expectation\n%s\n--- got\n%s\n--- want\n%s", r.name, r.sql, strings.Join(got, "\n"), strings.Join(r.want, "\n"))
	}
	if r.sluiceOnly {
		return
	}
	drows, err := duckQuery(context.Background(), db, r.sql)
	if err != nil {
		t.Errorf("%s: duckdb: %v\n%s", r.name, err, r.sql)
		return
	}
	if d := renderRows(drows, r.sort); !equalLines(d, r.want) {
		t.Errorf("%s: the expectation is not DuckDB's answer (run with -slt-update)\n%s\n--- duckdb\n%s\n--- file\n%s", r.name, r.sql, strings.Join(d, "\n"), strings.Join(r.want, "\n"))
	}
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// updateSLT rewrites path with DuckDB's answers as the expected rows.
func updateSLT(path string, recs []*sltRecord, db *sql.DB) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	// Keep everything between records (comments) by rebuilding from the
	// original lines: a record spans from its header to the blank line.
	lines := strings.Split(string(src), "\n")
	var out []string
	k := 0
	for i := 0; i < len(lines); i++ {
		if k < len(recs) && i+1 == recs[k].line {
			r := recs[k]
			k++
			out = append(out, r.header)
			out = append(out, strings.Split(r.sql, "\n")...)
			// skip the original record body
			for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
				i++
			}
			if r.kind == "query" {
				want := r.want
				if !r.sluiceOnly {
					rows, err := duckQuery(context.Background(), db, r.sql)
					if err != nil {
						return fmt.Errorf("%s: duckdb: %w\n%s", r.name, err, r.sql)
					}
					want = renderRows(rows, r.sort)
				}
				out = append(out, "----")
				out = append(out, want...)
			}
			continue
		}
		out = append(out, lines[i])
	}
	return os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644)
}
