package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/sluicedb/sluice/planner/plan"
)

var csvCols = []plan.Field{
	{Name: "id", Type: i64T}, {Name: "price", Type: dec(12, 2)}, {Name: "ratio", Type: f64T},
	{Name: "day", Type: dateT}, {Name: "flag", Type: boolT}, {Name: "name", Type: strT},
}

func csvNode(f *plan.CSVFormat, cols ...string) *plan.Node {
	n := &plan.Node{Kind: plan.KindScan, Scan: &plan.Scan{Table: "t", Format: "csv", Columns: cols, CSV: f}}
	for _, c := range cols {
		for _, fc := range f.Columns {
			if strings.EqualFold(fc.Name, c) {
				n.Schema = append(n.Schema, plan.Field{Name: c, Type: fc.Type, Nullable: true})
			}
		}
	}
	return n
}

type namedReader struct {
	io.Reader
	name string
}

func (r namedReader) Name() string { return r.name }

func scanCSV(t *testing.T, r io.Reader, n *plan.Node, batchRows int) ([][]any, []arrow.RecordBatch, error) {
	t.Helper()
	mem := checkedMem(t)
	op, err := NewCSVScan(context.Background(), r, n, Options{Mem: mem, BatchRows: batchRows})
	if err != nil {
		return nil, nil, err
	}
	defer op.Close()
	recs, err := Drain(context.Background(), op)
	if err != nil {
		return nil, nil, err
	}
	defer releaseRecs(recs)
	for _, r := range recs {
		if !r.Schema().Equal(n.Schema.Arrow()) {
			t.Fatalf("schema %s", r.Schema())
		}
	}
	return rows(recs), nil, nil
}

func TestCSVScan(t *testing.T) {
	N := any(nil)
	header := "\xef\xbb\xbfid,price,ratio,day,flag,name\r\n"
	body := "1,12.50,0.5,1998-09-02,true,plain\r\n" +
		"2,-0.07,1e3,1992-01-01,f,\"with, comma\"\r\n" +
		"3, ,,\t,,\r\n" + // all NULL (blank non-strings too)
		"\n" + // empty line: skipped
		" 4 , 7 ,2.25, 2000-02-29 ,1,\"\"\r\n" + // spaces around non-strings; "" is NULL (DuckDB's allow_quoted_nulls)
		"5,100,-1,1970-01-01,no,\"multi\nline \"\"quoted\"\"\"\n" +
		"6,1.005,3,1969-12-31,T,last" // no final newline; 1.005 rounds to 1.01
	want := [][]any{
		{"plain", int64(1), "12.50", 0.5, "1998-09-02", true},
		{"with, comma", int64(2), "-0.07", 1000.0, "1992-01-01", false},
		{N, int64(3), N, N, N, N},
		{N, int64(4), "7.00", 2.25, "2000-02-29", true},
		{"multi\nline \"quoted\"", int64(5), "100.00", -1.0, "1970-01-01", false},
		{"last", int64(6), "1.01", 3.0, "1969-12-31", true},
	}
	f := &plan.CSVFormat{Columns: csvCols, Header: true}
	n := csvNode(f, "name", "id", "price", "ratio", "day", "flag")
	for _, batch := range []int{1, 4, 100} {
		for name, r := range map[string]func() io.Reader{
			"whole":    func() io.Reader { return strings.NewReader(header + body) },
			"one-byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(header + body)) },
		} {
			got, _, err := scanCSV(t, r(), n, batch)
			if err != nil {
				t.Fatalf("%s/%d: %v", name, batch, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s/%d:\ngot  %v\nwant %v", name, batch, got, want)
			}
		}
	}

	// no header, '|' delimiter, trailing delimiter (TPC-H .tbl), NULL text,
	// a column read twice, columns skipped; a quoted "NULL" is the text
	// (allow_quoted_nulls=false)
	f2 := &plan.CSVFormat{Columns: csvCols, Delimiter: "|", Null: "NULL", QuotedNotNull: true}
	tbl := "1|1.00|NULL|1995-03-15|true|NULL|\n2|2.00|1|1995-03-16|false||\n3|3|2|NULL|NULL|\"NULL\"|\n"
	got, _, err := scanCSV(t, strings.NewReader(tbl), csvNode(f2, "ID", "name", "day", "id"), 2)
	if err != nil {
		t.Fatal(err)
	}
	want = [][]any{{int64(1), N, "1995-03-15", int64(1)}, {int64(2), "", "1995-03-16", int64(2)}, {int64(3), "NULL", N, int64(3)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}

	// no columns: only row counts
	mem := checkedMem(t)
	op, err := NewCSVScan(context.Background(), strings.NewReader(tbl), csvNode(f2), Options{Mem: mem, BatchRows: 2})
	if err != nil {
		t.Fatal(err)
	}
	recs := drainAll(t, op)
	total := 0
	for _, r := range recs {
		total += int(r.NumRows())
	}
	releaseRecs(recs)
	if total != 3 {
		t.Fatalf("%d rows, want 3", total)
	}
}

func TestCSVScanErrors(t *testing.T) {
	f := &plan.CSVFormat{Columns: csvCols, Header: true}
	hdr := "id,price,ratio,day,flag,name\n"
	ok := "1,1.00,1,1998-01-01,true,\"two\nlines\"\n"
	for _, tc := range []struct {
		name, data string
		cols       []string
		want       string
	}{
		{"int", hdr + ok + "x1,1.00,1,1998-01-01,true,a\n", []string{"id"}, `data.csv: line 4, column "id": cannot parse "x1" as int64`},
		{"decimal", hdr + ok + "1,1.0.0,1,1998-01-01,true,a\n", []string{"price"}, `line 4, column "price": cannot parse "1.0.0" as decimal(12,2)`},
		{"decimal range", hdr + "1,12345678901.00,1,1998-01-01,true,a\n", []string{"price"}, `does not fit decimal(12,2)`},
		{"date", hdr + "1,1.00,1,1998-02-30,true,a\n", []string{"day", "id"}, `line 2, column "day": cannot parse "1998-02-30" as date`},
		{"float", hdr + "1,1.00,abc,1998-02-03,true,a\n", []string{"ratio"}, `cannot parse "abc" as float64`},
		{"bool", hdr + "1,1.00,1,1998-02-03,maybe,a\n", []string{"flag"}, `cannot parse "maybe" as bool`},
		{"fields", hdr + ok + "1,2\n", []string{"id"}, "line 4: 2 fields, want 6"},
		{"quote", hdr + "1,1.00,1,1998-02-03,true,\"open\n", []string{"id"}, "line 2: quoted field not terminated"},
		{"after quote", hdr + "1,1.00,1,1998-02-03,true,\"a\"b\n", []string{"id"}, `unexpected 'b' after a quoted field`},
		{"utf8", hdr + "1,1.00,1,1998-02-03,true,\xff\n", []string{"name"}, "not valid UTF-8"},
	} {
		_, _, err := scanCSV(t, namedReader{strings.NewReader(tc.data), "data.csv"}, csvNode(f, tc.cols...), 100)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
			continue
		}
		if !plan.IsUserError(err) {
			t.Errorf("%s: %v is not a user error", tc.name, err)
		}
	}
	// plan errors
	if _, err := NewCSVScan(context.Background(), strings.NewReader(""), csvNode(f, "nope"), Options{}); err == nil {
		t.Error("unknown column accepted")
	}
	bad := &plan.CSVFormat{Columns: csvCols, Delimiter: "||"}
	if _, err := NewCSVScan(context.Background(), strings.NewReader(""), csvNode(bad, "id"), Options{}); err == nil {
		t.Error("two-character delimiter accepted")
	}
	noCSV := csvNode(f, "id")
	noCSV.Scan.CSV = nil
	if _, err := NewCSVScan(context.Background(), strings.NewReader(""), noCSV, Options{}); err == nil {
		t.Error("missing CSV format accepted")
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("boom") }

func TestCSVScanReadError(t *testing.T) {
	f := &plan.CSVFormat{Columns: csvCols}
	_, _, err := scanCSV(t, errReader{}, csvNode(f, "id"), 10)
	if err == nil || !strings.Contains(err.Error(), "boom") || plan.IsUserError(err) {
		t.Fatalf("got %v", err)
	}
}

// TestCSVScanDateFormatsAndTimestamps: DATE columns written day first or
// month first (CSVFormat.DateFormats, as the catalog's sniffer sets them)
// and ISO timestamps.
func TestCSVScanDateFormatsAndTimestamps(t *testing.T) {
	cols := []plan.Field{{Name: "Order Date", Type: dateT}, {Name: "us", Type: dateT}, {Name: "at", Type: plan.TimestampType}}
	f := &plan.CSVFormat{Columns: cols, Header: true,
		DateFormats: map[string]string{"Order Date": "%d/%m/%Y", "us": "%m-%d-%Y"}}
	data := "Order Date,us,at\r\n01/06/2024,12-31-2023,2024-01-06 10:30:00\r\n 9/2/2024 ,1-2-2024,2024-02-29T23:59:59.5\r\n,,\r\n"
	got, _, err := scanCSV(t, strings.NewReader(data), csvNode(f, "Order Date", "us", "at"), 10)
	if err != nil {
		t.Fatal(err)
	}
	N := any(nil)
	want := [][]any{
		{"2024-06-01", "2023-12-31", "2024-01-06 10:30:00"},
		{"2024-02-09", "2024-01-02", "2024-02-29 23:59:59.5"},
		{N, N, N},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
	for _, tc := range []struct{ data, want string }{
		{"Order Date,us,at\n31/02/2024,1-1-2024,2024-01-01 00:00:00\n", `line 2, column "Order Date": cannot parse "31/02/2024" as date`},
		{"Order Date,us,at\n1/1/2024,13-1-2024,2024-01-01 00:00:00\n", `line 2, column "us": cannot parse "13-1-2024" as date`},
		{"Order Date,us,at\n1/1/2024,1-1-2024,2024-01-01 25:00\n", `line 2, column "at": cannot parse "2024-01-01 25:00" as timestamp`},
		{"Order Date,us,at\n1/1-2024,1-1-2024,2024-01-01 00:00\n", `cannot parse "1/1-2024" as date`},
	} {
		_, _, err := scanCSV(t, namedReader{strings.NewReader(tc.data), "d.csv"}, csvNode(f, "Order Date", "us", "at"), 10)
		if err == nil || !strings.Contains(err.Error(), tc.want) || plan.CodeOf(err) != plan.CodeBadInput {
			t.Errorf("got %v, want %q (code %s)", err, tc.want, plan.CodeBadInput)
		}
	}
}

// TestCSVScanDialect: the read_csv options the scan applies: quote and
// escape characters, lines skipped before the header, null_padding,
// ignore_errors (a line with a bad value or a wrong field count is left
// out, values of the line already converted taken back).
func TestCSVScanDialect(t *testing.T) {
	N := any(nil)
	cols := []plan.Field{{Name: "id", Type: plan.Int64Type}, {Name: "name", Type: plan.StringType}, {Name: "day", Type: plan.DateType}}
	for _, tc := range []struct {
		name string
		f    plan.CSVFormat
		in   string
		want [][]any
	}{
		{"quote-escape", plan.CSVFormat{Header: true, Delimiter: ";", Quote: "'", Escape: "\\", Null: "NA"},
			"id;name;day\n1;'O\\'Ne;il';2020-01-02\n2;'a\\\\b';NA\n3;'';2021-03-04\n",
			[][]any{{int64(1), "O'Ne;il", "2020-01-02"}, {int64(2), "a\\b", N}, {int64(3), "", "2021-03-04"}}}, // '' is not the NULL text NA
		{"quote-doubled", plan.CSVFormat{Header: false, Quote: "'", QuotedNotNull: true},
			"1,'it''s',2020-01-02\n2,'',2020-01-03\n",
			[][]any{{int64(1), "it's", "2020-01-02"}, {int64(2), "", "2020-01-03"}}},
		{"skip", plan.CSVFormat{Header: true, Skip: 2}, "junk\nmore, junk\nid,name,day\n7,x,2020-01-01\n",
			[][]any{{int64(7), "x", "2020-01-01"}}},
		{"null-padding", plan.CSVFormat{Header: false, NullPadding: true}, "1,a,2020-01-01\n2\n3,c\n",
			[][]any{{int64(1), "a", "2020-01-01"}, {int64(2), N, N}, {int64(3), "c", N}}},
		{"ignore-errors", plan.CSVFormat{Header: false, IgnoreErrors: true}, "1,a,2020-01-01\n2,b,notadate\n3\nx,c,2020-01-02\n4,d,2020-01-04\n",
			[][]any{{int64(1), "a", "2020-01-01"}, {int64(4), "d", "2020-01-04"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.Columns = cols
			for _, batch := range []int{1, 100} {
				got, _, err := scanCSV(t, iotest.OneByteReader(strings.NewReader(tc.in)), csvNode(&f, "id", "name", "day"), batch)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("batch %d:\ngot  %v\nwant %v", batch, got, tc.want)
				}
			}
		})
	}
	// Without ignore_errors the same lines fail the scan.
	f := plan.CSVFormat{Columns: cols}
	if _, _, err := scanCSV(t, strings.NewReader("1,a,2020-01-01\n2,b,notadate\n"), csvNode(&f, "id", "name", "day"), 10); plan.CodeOf(err) != plan.CodeBadInput {
		t.Fatalf("err %v, want %s", err, plan.CodeBadInput)
	}
}

// TestCSVScanNestedIgnoreErrors: a nested column's value that does not
// cast (malformed text, an element or map value that is no number,
// repeated map keys) skips its row under ignore_errors, in any batch
// size (a batch of bad rows only too), and without it fails naming the
// line and column (SL105). No buffer leaks (checkedMem).
func TestCSVScanNestedIgnoreErrors(t *testing.T) {
	cols := []plan.Field{{Name: "id", Type: plan.Int64Type}, {Name: "m", Type: plan.MapOf(plan.StringType, plan.Int64Type)},
		{Name: "l", Type: plan.ListOf(plan.Int64Type)}}
	in := "1|{a=1}|[1]\n2|{a=1|[2]\n3|{a=x}|[3]\n4|{a=1, a=2}|[4]\n5|{b=5}|[5, y]\n6|{c=6}|[6\n7||\n8|{d=8, e=9}|[8, 9]\n"
	f := plan.CSVFormat{Delimiter: "|", IgnoreErrors: true, Columns: cols}
	for _, batch := range []int{1, 2, 3, 100} {
		got, _, err := scanCSV(t, strings.NewReader(in), csvNode(&f, "id", "m", "l"), batch)
		if err != nil {
			t.Fatalf("batch %d: %v", batch, err)
		}
		var ids []any
		for _, r := range got {
			ids = append(ids, r[0])
		}
		if want := []any{int64(1), int64(7), int64(8)}; !reflect.DeepEqual(ids, want) {
			t.Fatalf("batch %d: ids %v, want %v", batch, ids, want)
		}
	}
	f.IgnoreErrors = false
	_, _, err := scanCSV(t, strings.NewReader(in), csvNode(&f, "id", "m", "l"), 100)
	if plan.CodeOf(err) != plan.CodeBadInput || !strings.Contains(fmt.Sprint(err), `line 2, column "m"`) {
		t.Fatalf("err %v, want %s at line 2, column m", err, plan.CodeBadInput)
	}
}
