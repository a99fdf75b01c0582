package pgwire

import (
	"context"
	"encoding/hex"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// TestParseMillis reads statement_timeout values as Postgres does and
// shows them as SHOW does.
func TestParseMillis(t *testing.T) {
	for _, c := range []struct {
		in   string
		ms   int64
		show string
	}{
		{"0", 0, "0"}, {"2000", 2000, "2s"}, {"2s", 2000, "2s"}, {"2 s", 2000, "2s"}, {"1500ms", 1500, "1500ms"},
		{"1.5s", 1500, "1500ms"}, {"1min", 60000, "1min"}, {"90s", 90000, "90s"}, {"120s", 120000, "2min"},
		{"1h", 3600000, "1h"}, {"1d", 86400000, "1d"}, {"2500us", 3, "3ms"}, {" 10 ", 10, "10ms"},
	} {
		ms, err := parseMillis(c.in)
		if err != nil || ms != c.ms {
			t.Errorf("parseMillis(%q) = %d, %v; want %d", c.in, ms, err, c.ms)
			continue
		}
		if got := showMillis(ms); got != c.show {
			t.Errorf("showMillis(%d) = %q, want %q", ms, got, c.show)
		}
	}
	for _, bad := range []string{"", "abc", "1 fortnight", "2ss", "NaN", "1e20"} {
		if _, err := parseMillis(bad); err == nil {
			t.Errorf("parseMillis(%q): no error", bad)
		}
	}
	if _, err := checkSetting("statement_timeout", "-1"); err == nil {
		t.Error("statement_timeout -1: no error")
	}
}

// TestStartupOptions applies startup parameters and the -c switches of
// the options parameter.
func TestStartupOptions(t *testing.T) {
	if got := splitOptions(`-c statement_timeout=5s  -capplication_name=a\ b --search-path=x`); !reflect.DeepEqual(got,
		[]string{"-c", "statement_timeout=5s", "-capplication_name=a b", "--search-path=x"}) {
		t.Fatalf("splitOptions: %q", got)
	}
	c := &conn{settings: defaultSettings()}
	err := c.startupOptions(map[string]string{"user": "u", "DateStyle": "ISO, DMY",
		"options": `-c statement_timeout=5s -capplication_name=a\ b --search-path=x -B 8`})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"statement_timeout": "5s", "application_name": "a b", "search_path": "x", "datestyle": "ISO, DMY"} {
		if c.settings[k] != want {
			t.Errorf("%s = %q, want %q", k, c.settings[k], want)
		}
	}
	if c.statementTimeout() != 5*time.Second {
		t.Errorf("statementTimeout %v", c.statementTimeout())
	}
	if err := c.startupOptions(map[string]string{"statement_timeout": "soon"}); err == nil {
		t.Error("a bad statement_timeout at startup: no error")
	}
}

// TestStatementTimeout: a query that runs past statement_timeout gets
// 57014 "canceling statement due to statement timeout", its job is
// cancelled, and the connection runs the next statement; 0 is no limit.
func TestStatementTimeout(t *testing.T) {
	fake := &fakeEngine{rows: -1, cancelled: make(chan string, 1)}
	fe, _ := fakeClient(t, fake)
	q := func(sql string) []pgproto3.BackendMessage {
		t.Helper()
		fe.Send(&pgproto3.Query{String: sql})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		var out []pgproto3.BackendMessage
		for {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
				return out
			}
			if m, ok := msg.(*pgproto3.ErrorResponse); ok {
				cp := *m
				msg = &cp
			}
			out = append(out, msg)
		}
	}
	q(`set statement_timeout = '150ms'`)
	start := time.Now()
	msgs := q(`select n from t`)
	e, ok := msgs[len(msgs)-1].(*pgproto3.ErrorResponse)
	if !ok || e.Code != "57014" || e.Message != "canceling statement due to statement timeout" {
		t.Fatalf("got %#v", msgs)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 5*time.Second {
		t.Fatalf("timed out after %v", d)
	}
	select {
	case job := <-fake.cancelled:
		if job != "j1" {
			t.Fatalf("cancelled %s", job)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the job was not cancelled")
	}
	fake.rows = 3
	if msgs := q(`select n from t`); len(msgs) != 5 {
		t.Fatalf("after the timeout: %#v", msgs)
	}
	// A bad value is refused; SHOW tells the value.
	if msgs := q(`set statement_timeout = 'soon'`); msgs[0].(*pgproto3.ErrorResponse).Code != "22023" {
		t.Fatalf("bad value: %#v", msgs)
	}
	msgs = q(`show statement_timeout`)
	if string(msgs[1].(*pgproto3.DataRow).Values[0]) != "150ms" {
		t.Fatalf("show: %#v", msgs)
	}
	// 0: no limit.
	q(`set statement_timeout = 0`)
	fake.rows = -1
	fe.Send(&pgproto3.Query{String: `select n from t`})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = fe.Receive()
	}()
	select {
	case <-done:
		t.Fatal("a query ended with statement_timeout 0")
	case <-time.After(400 * time.Millisecond):
	}
}

func TestSessionValues(t *testing.T) {
	c := &conn{user: "o'neil", db: "d"}
	for _, tc := range []struct{ in, want string }{
		{"select current_user, count(*) from nation", "select 'o''neil', count(*) from nation"},
		{"select n_name from nation where n_name <> SESSION_USER and user = current_role", "select n_name from nation where n_name <> 'o''neil' and 'o''neil' = 'o''neil'"},
		{"select current_catalog as db", "select 'd' as db"},
		// strings and quoted identifiers that spell one stay
		{`select 'current_user', "user" from t`, `select 'current_user', "user" from t`},
		{"select n_name from nation", "select n_name from nation"},
	} {
		if got := c.sessionValues(tc.in); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

// TestSetSearchPath: search_path is a list of names, each quoted where it
// must be, as Postgres flattens SET's values (DBeaver sets public,"$user").
func TestSetSearchPath(t *testing.T) {
	c := &conn{s: &Server{}, user: "u", db: "d", settings: defaultSettings()}
	for in, want := range map[string]string{
		`SET search_path = public,"$user"`:  `public, "$user"`,
		`SET search_path TO 'My Schema', x`: `"My Schema", x`,
		`SET search_path = DEFAULT`:         `"$user", public`,
	} {
		if _, ok, err := c.answer(context.Background(), in, parseOne(in), false); !ok || err != nil {
			t.Fatalf("%s: ok %v err %v", in, ok, err)
		}
		if got := c.settings["search_path"]; got != want {
			t.Errorf("%s: search_path %q, want %q", in, got, want)
		}
	}
}

// TestSettingsTransactional: a SET is undone when its transaction rolls
// back, as in Postgres: a block's ROLLBACK, the COMMIT of a failed block,
// a Query message of several statements that fails, and extended
// messages up to a Sync that fail. SET LOCAL ends with its block either
// way; DISCARD ALL resets the session and is refused in a block.
func TestSettingsTransactional(t *testing.T) {
	fe, _ := fakeClient(t, &fakeEngine{rows: 3})
	show := func() string {
		t.Helper()
		sendMsgs(t, fe, &pgproto3.Query{String: `show statement_timeout`})
		got := recvUntil(t, fe)
		var hexv string
		if _, err := fmt.Sscanf(got, "fields:statement_timeout/0 row:%s 'SHOW' ready:", &hexv); err != nil {
			t.Fatalf("show: %s", got)
		}
		v, err := hex.DecodeString(hexv)
		if err != nil {
			t.Fatalf("show: %s", got)
		}
		return string(v)
	}
	steps := []struct{ sql, want, timeout string }{
		{`set statement_timeout = '2s'`, "'SET' ready:I", "2s"},
		{`begin`, "'BEGIN' ready:T", "2s"},
		{`set statement_timeout = '1s'`, "'SET' ready:T", "1s"},
		{`rollback`, "'ROLLBACK' ready:I", "2s"},
		{`begin; set statement_timeout = '1s'; commit`, "'BEGIN' 'SET' 'COMMIT' ready:I", "1s"},
		// SET LOCAL ends with the block; a plain SET after it is undone by
		// the rollback too.
		{`begin; set local statement_timeout = '5s'; set statement_timeout = 7000`, "'BEGIN' 'SET' 'SET' ready:T", "7s"},
		{`rollback`, "'ROLLBACK' ready:I", "1s"},
		{`begin; set local statement_timeout = '5s'`, "'BEGIN' 'SET' ready:T", "5s"},
		{`commit`, "'COMMIT' ready:I", "1s"},
		// A failed block: its COMMIT rolls back.
		{`begin; set statement_timeout = '3s'; fetch 1 from nosuch`, "'BEGIN' 'SET' error:34000 ready:E", ""},
		{`commit`, "'ROLLBACK' ready:I", "1s"},
		// RESET ALL in a block that rolls back.
		{`begin; reset all; rollback`, "'BEGIN' 'RESET' 'ROLLBACK' ready:I", "1s"},
		// A Query message of several statements is one transaction.
		{`set statement_timeout = '4s'; fetch 1 from nosuch`, "'SET' error:34000 ready:I", "1s"},
		{`set statement_timeout = '4s'; select n from t`, "'SET' fields:n/0 row:30 row:31 row:32 'SELECT 3' ready:I", "4s"},
		{`begin; discard all`, "'BEGIN' error:25001 ready:E", ""},
		{`rollback`, "'ROLLBACK' ready:I", "4s"},
		{`discard all`, "'DISCARD ALL' ready:I", "0"},
		{`discard plans`, "'DISCARD PLANS' ready:I", "0"},
	}
	for _, s := range steps {
		sendMsgs(t, fe, &pgproto3.Query{String: s.sql})
		if got := recvUntil(t, fe); got != s.want {
			t.Fatalf("%s:\n got %s\nwant %s", s.sql, got, s.want)
		}
		if s.timeout == "" {
			continue // a failed block runs no SHOW
		}
		if got := show(); got != s.timeout {
			t.Fatalf("after %s: statement_timeout %q, want %q", s.sql, got, s.timeout)
		}
	}
	// Extended messages up to a Sync are one transaction.
	exec := func(sql string) []pgproto3.FrontendMessage {
		return []pgproto3.FrontendMessage{&pgproto3.Parse{Query: sql}, &pgproto3.Bind{}, &pgproto3.Execute{}}
	}
	sendMsgs(t, fe, append(append(exec(`set statement_timeout = '6s'`), exec(`fetch 1 from nosuch`)...), &pgproto3.Sync{})...)
	if got, want := recvUntil(t, fe), "*pgproto3.ParseComplete *pgproto3.BindComplete 'SET' *pgproto3.ParseComplete *pgproto3.BindComplete error:34000 ready:I"; got != want {
		t.Fatalf("extended, failing:\n got %s\nwant %s", got, want)
	}
	if got := show(); got != "0" {
		t.Fatalf("after a failed extended transaction: %q", got)
	}
	sendMsgs(t, fe, append(exec(`set statement_timeout = '6s'`), &pgproto3.Sync{})...)
	if got, want := recvUntil(t, fe), "*pgproto3.ParseComplete *pgproto3.BindComplete 'SET' ready:I"; got != want {
		t.Fatalf("extended:\n got %s\nwant %s", got, want)
	}
	if got := show(); got != "6s" {
		t.Fatalf("after an extended SET: %q", got)
	}
	// DEALLOCATE drops a prepared statement of the protocol; DISCARD ALL
	// drops them all.
	sendMsgs(t, fe, &pgproto3.Parse{Name: "p1", Query: `select n from t`}, &pgproto3.Parse{Name: "p2", Query: `select n from t`}, &pgproto3.Sync{})
	recvUntil(t, fe)
	for _, s := range []struct{ sql, want string }{
		{`deallocate p1`, "'DEALLOCATE' ready:I"},
		{`deallocate p1`, "error:26000 ready:I"},
		{`discard all`, "'DISCARD ALL' ready:I"},
		{`deallocate p2`, "error:26000 ready:I"},
	} {
		sendMsgs(t, fe, &pgproto3.Query{String: s.sql})
		if got := recvUntil(t, fe); got != s.want {
			t.Fatalf("%s:\n got %s\nwant %s", s.sql, got, s.want)
		}
	}
}
