package pgwire

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5/pgproto3"
)

// copyOptions parses the options of a COPY statement.
func copyOptions(t *testing.T, sql string) (*copyFormat, error) {
	t.Helper()
	n := parseOne(sql)
	if n == nil || n.GetCopyStmt() == nil {
		t.Fatalf("not a COPY: %s", sql)
	}
	return parseCopyOptions(n.GetCopyStmt().Options)
}

// TestCopyFields encodes fields as Postgres's COPY TO does: text escapes
// backslash, newline, carriage return, tab, backspace, form feed,
// vertical tab and the delimiter; csv quotes what needs it.
func TestCopyFields(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String}, {Name: "b", Type: arrow.BinaryTypes.String}}, nil)
	for _, c := range []struct {
		opts string
		in   []string
		want string
	}{
		{``, []string{"plain", "a\tb\nc\\d\re\bf\fg\vh"}, `plain	a\tb\nc\\d\re\bf\fg\vh`},
		{`with (delimiter '|')`, []string{"a|b", "x\ty"}, `a\|b|x\ty`},
		{`with (delimiter ',')`, []string{"a,b", "\x01"}, "a\\,b,\x01"},
		{`with (format csv)`, []string{"plain", ""}, `plain,""`},
		{`with csv`, []string{"a,b", `say "hi"`}, `"a,b","say ""hi"""`},
		{`with csv`, []string{"two\nlines", "cr\r"}, "\"two\nlines\",\"cr\r\""},
		{`with (format csv, delimiter ';')`, []string{"a,b", "a;b"}, `a,b;"a;b"`},
		{`with (format csv, quote '''', escape '\')`, []string{`it's`, `back\slash`}, `'it\'s',back\slash`},
		{`with (format csv, escape '\')`, []string{`a"b`, `a\b`}, `"a\"b",a\b`},
		{`with (format csv, force_quote *)`, []string{"x", "y"}, `"x","y"`},
		{`with (format csv, force_quote (b))`, []string{"x", "y"}, `x,"y"`},
		{`with csv force quote a`, []string{"x", "y"}, `"x",y`},
		{`with (format csv, null 'NA')`, []string{"NA", ""}, `"NA",`},
		{`with (format csv)`, []string{`\.`, "x"}, `\.,x`},
	} {
		f, err := copyOptions(t, `copy t to stdout `+c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.opts, err)
		}
		if err := f.resolve(schema); err != nil {
			t.Fatalf("%s: %v", c.opts, err)
		}
		var line []byte
		for j, v := range c.in {
			if j > 0 {
				line = append(line, f.delim)
			}
			line = f.appendField(line, []byte(v), j)
		}
		if string(line) != c.want {
			t.Errorf("%s %q:\n got %q\nwant %q", c.opts, c.in, line, c.want)
		}
	}
	// \. alone on its line is quoted in csv, so that it does not end the data.
	f, _ := copyOptions(t, `copy t to stdout csv`)
	if err := f.resolve(arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String}}, nil)); err != nil {
		t.Fatal(err)
	}
	if got := string(f.appendField(nil, []byte(`\.`), 0)); got != `"\."` {
		t.Errorf(`\. alone: %q`, got)
	}
	// Headers are fields too.
	f, _ = copyOptions(t, `copy t to stdout with (format csv, header)`)
	if got := string(f.appendHeader(nil, arrow.NewSchema([]arrow.Field{{Name: "a,b", Type: arrow.BinaryTypes.String}, {Name: "?column?", Type: arrow.BinaryTypes.String}}, nil))); got != "\"a,b\",?column?\n" {
		t.Errorf("csv header %q", got)
	}
	f, _ = copyOptions(t, `copy t to stdout with header`)
	if got := string(f.appendHeader(nil, schema)); got != "a\tb\n" || f.csv || f.null != `\N` {
		t.Errorf("text header %q", got)
	}
}

// TestCopyOptions refuses what Postgres refuses, with its SQLSTATEs.
func TestCopyOptions(t *testing.T) {
	for _, c := range []struct{ opts, state string }{
		{`with (format binary)`, "0A000"},
		{`binary`, "0A000"},
		{`with (format xml)`, "22023"},
		{`with (delimiter 'ab')`, "0A000"},
		{`with (delimiter E'\n')`, "22023"},
		{`with (delimiter '\')`, "22023"},
		{`with (delimiter 'a')`, "22023"},
		{`with (format csv, delimiter '"')`, "22023"},
		{`with (quote '"')`, "0A000"},
		{`with (force_quote *)`, "0A000"},
		{`with (null 'a	b')`, "22023"},
		{`with (format csv, header match)`, "0A000"},
		{`with (header maybe)`, "22023"},
		{`with (format csv, format text)`, "42601"},
		{`with (freeze)`, "0A000"},
		{`with (colour 'red')`, "42601"},
		{`with (encoding 'LATIN1')`, "0A000"},
	} {
		_, err := copyOptions(t, `copy t to stdout `+c.opts)
		if got := errorResponse(err).Code; err == nil || got != c.state {
			t.Errorf("%s: %v (%s), want %s", c.opts, err, got, c.state)
		}
	}
	for _, ok := range []string{`with (format csv, header true, delimiter '|')`, `with csv header`, `with (header off)`,
		`with (encoding 'UTF8')`, `with (format text, null '')`, `with delimiter '|' null 'x' csv header quote '"' escape '\' force quote a`} {
		if _, err := copyOptions(t, `copy t to stdout `+ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// recvUntil reads messages up to ReadyForQuery and describes them, one
// word each (data as its text).
func recvUntil(t *testing.T, fe *pgproto3.Frontend) string {
	t.Helper()
	var out []string
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.ReadyForQuery:
			return strings.Join(append(out, "ready:"+string(m.TxStatus)), " ")
		case *pgproto3.CopyOutResponse:
			out = append(out, fmt.Sprintf("copyout:%d", len(m.ColumnFormatCodes)))
		case *pgproto3.CopyData:
			out = append(out, "data:"+strings.TrimSuffix(string(m.Data), "\n"))
		case *pgproto3.CopyDone:
			out = append(out, "done")
		case *pgproto3.CommandComplete:
			out = append(out, "'"+string(m.CommandTag)+"'")
		case *pgproto3.RowDescription:
			var names []string
			for _, f := range m.Fields {
				names = append(names, fmt.Sprintf("%s/%d", f.Name, f.Format))
			}
			out = append(out, "fields:"+strings.Join(names, ","))
		case *pgproto3.DataRow:
			var vals []string
			for _, v := range m.Values {
				vals = append(vals, fmt.Sprintf("%x", v))
			}
			out = append(out, "row:"+strings.Join(vals, ","))
		case *pgproto3.ErrorResponse:
			out = append(out, "error:"+m.Code)
		case *pgproto3.NoticeResponse:
			out = append(out, "notice:"+m.Code)
		case *pgproto3.PortalSuspended:
			out = append(out, "suspended")
		default:
			out = append(out, fmt.Sprintf("%T", msg))
		}
	}
}

func sendMsgs(t *testing.T, fe *pgproto3.Frontend, msgs ...pgproto3.FrontendMessage) {
	t.Helper()
	for _, m := range msgs {
		fe.Send(m)
	}
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestCopyProtocol: COPY TO STDOUT answers CopyOutResponse, a CopyData
// per row across the result's record batches, CopyDone and COPY n; COPY
// FROM is refused before any copy starts.
func TestCopyProtocol(t *testing.T) {
	fe, _ := fakeClient(t, &fakeEngine{rows: 6})
	for _, c := range []struct{ sql, want string }{
		{`copy (select n from t) to stdout with csv header`,
			"copyout:1 data:n data:0 data:1 data:2 data:3 data:4 data:5 done 'COPY 6' ready:I"},
		{`copy t to stdout`, "copyout:1 data:0 data:1 data:2 data:3 data:4 data:5 done 'COPY 6' ready:I"},
		{`copy t from stdin`, "error:0A000 ready:I"},
		{`copy t to '/etc/passwd'`, "error:0A000 ready:I"},
		{`copy (select n from t) to 's3://sluice/out/' (format parquet)`, "error:22000 ready:I"}, // SL023: the HTTP API's
		{`copy (select n from t) to stdout with (format csv, force_quote (nope))`, "error:42703 ready:I"},
	} {
		sendMsgs(t, fe, &pgproto3.Query{String: c.sql})
		if got := recvUntil(t, fe); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.sql, got, c.want)
		}
	}
	// The rows go out as the result is read: the first record's rows
	// arrive while the rest is still unread.
	fake := &fakeEngine{rows: 8, gate: make(chan struct{})}
	sfe, _ := fakeClient(t, fake)
	sendMsgs(t, sfe, &pgproto3.Query{String: `copy (select n from t) to stdout`})
	for i := 0; i < 5; i++ { // CopyOutResponse and the first record's four rows
		msg, err := sfe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := msg.(*pgproto3.CopyData); ok && string(d.Data) != fmt.Sprintf("%d\n", i-1) {
			t.Fatalf("row %d: %q", i-1, d.Data)
		}
	}
	close(fake.gate)
	if got := recvUntil(t, sfe); got != "data:4 data:5 data:6 data:7 done 'COPY 8' ready:I" {
		t.Fatalf("after the gate: %s", got)
	}
	// In the extended protocol: Describe answers NoData, Execute copies.
	sendMsgs(t, fe, &pgproto3.Parse{Query: `copy (select n from t) to stdout`}, &pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
	if got, want := recvUntil(t, fe), "*pgproto3.ParseComplete *pgproto3.BindComplete *pgproto3.NoData copyout:1 data:0 data:1 data:2 data:3 data:4 data:5 done 'COPY 6' ready:I"; got != want {
		t.Errorf("extended:\n got %s\nwant %s", got, want)
	}
}

// TestCursorProtocol: DECLARE, FETCH and MOVE read forward through the
// result across its record batches; the transaction status follows
// BEGIN, errors and COMMIT; cursors end with their block unless WITH
// HOLD.
func TestCursorProtocol(t *testing.T) {
	fe, _ := fakeClient(t, &fakeEngine{rows: 10})
	steps := []struct{ sql, want string }{
		{`declare c cursor for select n from t`, "error:25P01 ready:I"},
		{`begin`, "'BEGIN' ready:T"},
		{`declare c cursor for select n from t`, "'DECLARE CURSOR' ready:T"},
		{`declare c cursor for select n from t`, "error:42P03 ready:E"},
		{`fetch 1 from c`, "error:25P02 ready:E"},
		{`rollback`, "'ROLLBACK' ready:I"},
		{`fetch 1 from c`, "error:34000 ready:I"},
		{`begin; declare c binary cursor for select n from t; fetch 3 from c`,
			"'BEGIN' 'DECLARE CURSOR' fields:n/1 row:0000000000000000 row:0000000000000001 row:0000000000000002 'FETCH 3' ready:T"},
		{`declare d no scroll cursor for select n from t`, "'DECLARE CURSOR' ready:T"},
		{`fetch forward 2 from d`, "fields:n/0 row:30 row:31 'FETCH 2' ready:T"},
		{`move 5 in d`, "'MOVE 5' ready:T"},
		{`fetch next from d`, "fields:n/0 row:37 'FETCH 1' ready:T"},
		{`fetch absolute 10 from d`, "fields:n/0 row:39 'FETCH 1' ready:T"},
		{`fetch all from d`, "fields:n/0 'FETCH 0' ready:T"},
		{`move 1 d`, "'MOVE 0' ready:T"},
		{`close d`, "'CLOSE CURSOR' ready:T"},
		{`declare s scroll cursor for select n from t`, "error:0A000 ready:E"},
		{`commit`, "'ROLLBACK' ready:I"},
		{`begin`, "'BEGIN' ready:T"},
		{`declare e cursor for select n from t`, "'DECLARE CURSOR' ready:T"},
		{`fetch 2 e`, "fields:n/0 row:30 row:31 'FETCH 2' ready:T"},
		{`fetch backward 1 e`, "error:55000 ready:E"},
		{`rollback to savepoint x`, "'ROLLBACK' ready:T"},
		{`fetch relative 2 e`, "fields:n/0 row:33 'FETCH 1' ready:T"},
		{`declare h cursor with hold for select n from t`, "'DECLARE CURSOR' ready:T"},
		{`begin`, "notice:25001 'BEGIN' ready:T"},
		{`commit`, "'COMMIT' ready:I"},
		{`fetch 1 e`, "error:34000 ready:I"},
		{`fetch 4 h`, "fields:n/0 row:30 row:31 row:32 row:33 'FETCH 4' ready:I"},
		{`close all`, "'CLOSE CURSOR ALL' ready:I"},
		{`fetch 1 h`, "error:34000 ready:I"},
		{`commit`, "notice:25P01 'COMMIT' ready:I"},
		// Several statements outside a block are one implicit block.
		{`declare i cursor for select n from t; fetch 2 from i; fetch 1 from i`,
			"'DECLARE CURSOR' fields:n/0 row:30 row:31 'FETCH 2' fields:n/0 row:32 'FETCH 1' ready:I"},
		{`fetch 1 from i`, "error:34000 ready:I"},
	}
	for _, s := range steps {
		sendMsgs(t, fe, &pgproto3.Query{String: s.sql})
		if got := recvUntil(t, fe); got != s.want {
			t.Fatalf("%s:\n got %s\nwant %s", s.sql, got, s.want)
		}
	}
	// A FETCH reads no further than it needs: FETCH 2 answers while the
	// result's second record is unread.
	gated := &fakeEngine{rows: 8, gate: make(chan struct{})}
	gfe, _ := fakeClient(t, gated)
	sendMsgs(t, gfe, &pgproto3.Query{String: `begin; declare g cursor for select n from t; fetch 2 from g`})
	if got := recvUntil(t, gfe); got != "'BEGIN' 'DECLARE CURSOR' fields:n/0 row:30 row:31 'FETCH 2' ready:T" {
		t.Fatalf("gated fetch: %s", got)
	}
	close(gated.gate)
	sendMsgs(t, gfe, &pgproto3.Query{String: `fetch all from g`})
	if got := recvUntil(t, gfe); got != "fields:n/0 row:32 row:33 row:34 row:35 row:36 row:37 'FETCH 6' ready:T" {
		t.Fatalf("gated fetch all: %s", got)
	}
	// A FETCH in the extended protocol: Execute's row limit splits it.
	sendMsgs(t, fe, &pgproto3.Query{String: `begin; declare x cursor for select n from t`})
	recvUntil(t, fe)
	sendMsgs(t, fe, &pgproto3.Parse{Query: `fetch 5 from x`}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{MaxRows: 3}, &pgproto3.Execute{MaxRows: 3}, &pgproto3.Sync{})
	if got, want := recvUntil(t, fe), "*pgproto3.ParseComplete *pgproto3.BindComplete fields:n/0 row:30 row:31 row:32 suspended row:33 row:34 'FETCH 2' ready:T"; got != want {
		t.Errorf("extended fetch:\n got %s\nwant %s", got, want)
	}
	sendMsgs(t, fe, &pgproto3.Parse{Query: `fetch all from x`}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	if got, want := recvUntil(t, fe), "*pgproto3.ParseComplete *pgproto3.BindComplete row:35 row:36 row:37 row:38 row:39 'FETCH 5' ready:T"; got != want {
		t.Errorf("extended fetch all:\n got %s\nwant %s", got, want)
	}
	// A FETCH portal whose cursor was closed since it was bound.
	sendMsgs(t, fe, &pgproto3.Parse{Query: `fetch 1 from x`}, &pgproto3.Bind{DestinationPortal: "f"}, &pgproto3.Describe{ObjectType: 'P', Name: "f"},
		&pgproto3.Query{String: "close x"})
	if got, want := recvUntil(t, fe), "*pgproto3.ParseComplete *pgproto3.BindComplete fields:n/0 'CLOSE CURSOR' ready:T"; got != want {
		t.Fatalf("close under a portal:\n got %s\nwant %s", got, want)
	}
	sendMsgs(t, fe, &pgproto3.Execute{Portal: "f"}, &pgproto3.Sync{})
	if got, want := recvUntil(t, fe), "error:34000 ready:E"; got != want {
		t.Errorf("execute after close:\n got %s\nwant %s", got, want)
	}
}
