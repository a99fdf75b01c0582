package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPSQLTabCompletion drives the real psql in a terminal (tmux) and
// presses Tab, as a user does: the completion offers the tables whose
// names start with what was typed (issue 23: it once offered every
// table, whatever was typed).
func TestPSQLTabCompletion(t *testing.T) {
	psql := needPSQL(t)
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux not installed: .ci/run installs it")
		}
		t.Skip("tmux not installed (apt-get install -y tmux)")
	}
	_, pg := pgStack(t)
	// A tmux server of our own (its own socket), killed at the end.
	sock := fmt.Sprintf("sluice-tab-%d", os.Getpid())
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	shell := fmt.Sprintf("TERM=xterm %s '%s' -X", psql, pgURL(pg))
	tm("new-session", "-d", "-x", "200", "-y", "50", shell)
	t.Cleanup(func() { _ = exec.Command(tmux, "-L", sock, "kill-server").Run() })
	// screen waits until the pane shows want, and returns it.
	screen := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			out := tm("capture-pane", "-p")
			if strings.Contains(out, want) {
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("the terminal never showed %q:\n%s", want, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// prompt waits for an empty prompt on the last line (keys typed
	// before it shows may be lost).
	prompt := func() {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			lines := strings.Split(strings.TrimSpace(tm("capture-pane", "-p")), "\n")
			if last := strings.TrimSpace(lines[len(lines)-1]); strings.HasSuffix(last, "=>") {
				time.Sleep(200 * time.Millisecond)
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no prompt:\n%s", strings.Join(lines, "\n"))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	prompt()
	// One table starts with "na": Tab completes it.
	tm("send-keys", "select * from na", "Tab")
	screen("select * from nation")
	tm("send-keys", "C-c")
	prompt()
	// Two tables start with "pa": Tab completes the common prefix,
	// a second Tab lists both, and nothing else.
	tm("send-keys", "select * from pa", "Tab")
	screen("select * from part")
	time.Sleep(500 * time.Millisecond)
	tm("send-keys", "Tab")
	time.Sleep(300 * time.Millisecond)
	tm("send-keys", "Tab")
	out := screen("partsupp")
	t.Logf("after Tab Tab:\n%s", strings.TrimSpace(out))
	list := out[strings.Index(out, "nation ^C")+len("nation ^C"):] // this line's completions
	if !strings.Contains(list, "part      partsupp") {
		t.Fatalf("completion of \"pa\" does not list part and partsupp:\n%s", out)
	}
	for _, other := range []string{"nation", "orders", "region", "supplier", "customer", "lineitem", "public."} {
		if strings.Contains(list, other) {
			t.Fatalf("completion of \"pa\" offers %s:\n%s", other, out)
		}
	}
	tm("send-keys", "C-c")
	prompt()
	tm("send-keys", `\q`, "Enter")
}

// TestPSQLTPCH runs the 22 TPC-H queries through the real psql (issue 23:
// Q7, Q8, Q9 and Q22 once came back over psql as one row of NULLs), each
// answer checked against DuckDB. psql prints text; the column types to
// read it by are the ones the server describes for the query.
func TestPSQLTPCH(t *testing.T) {
	psql := needPSQL(t)
	db := openDuck(t, dataDir(t, *sfFlag))
	_, pg := pgStack(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgURL(pg))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	const sep, null = "\x1f", "<NULL>"
	for _, q := range tpchQueries(t) {
		t.Run(q.name, func(t *testing.T) {
			sd, err := conn.Prepare(ctx, "", q.sql)
			if err != nil {
				t.Fatal(err)
			}
			a := clientAnswer{Name: q.name}
			for _, f := range sd.Fields {
				a.Types = append(a.Types, strconv.FormatUint(uint64(f.DataTypeOID), 10))
			}
			out, err := exec.Command(psql, pgURL(pg), "-X", "-A", "-t", "-F", sep, "-P", "null="+null, "-v", "ON_ERROR_STOP=1",
				"-c", q.sql).CombinedOutput()
			if err != nil {
				t.Fatalf("psql: %v\n%s", err, out)
			}
			for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
				if line == "" {
					continue
				}
				var r []any
				for _, v := range strings.Split(line, sep) {
					if v == null {
						r = append(r, nil)
					} else {
						r = append(r, v)
					}
				}
				if len(r) != len(a.Types) {
					t.Fatalf("%d fields, %d columns: %q", len(r), len(a.Types), line)
				}
				a.Rows = append(a.Rows, r)
			}
			compareRows(t, clientRows(t, a), duckRows(t, db, q.sql), q.ordered)
		})
	}
}
