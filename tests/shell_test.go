package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/local"
)

// shellStack is an embedded stack with the TPC-H tables for CLI tests.
func shellStack(t *testing.T, mod func(*local.Options)) (*local.Stack, string) {
	t.Helper()
	dir := dataDir(t, *sfFlag)
	st := startStack(t, "", mod)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	return st, dir
}

// TestShellScripts runs `sluice sql` as scripts (-c, -f and stdin) and
// `sluice submit` with flags after the SQL, checking the answers against
// DuckDB and the output formats for fidelity.
func TestShellScripts(t *testing.T) {
	bin := sluiceBin(t)
	st, dir := shellStack(t, nil)
	db := openDuck(t, dir)
	env := []string{"SLUICE_COORDINATOR=" + st.APIURL, "HOME=" + t.TempDir()}
	tmp := t.TempDir()

	want := duckRows(t, db, "select count(*) from lineitem")[0][0]
	wantN := fmt.Sprint(want)

	// Flags after the positional SQL; SQL that starts with a comment.
	out, errOut, code := runCLI(t, bin, tmp, env, "submit", "-- count them\nselect count(*) as n from lineitem", "--format", "csv")
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 2 || recs[0][0] != "n" || recs[1][0] != wantN {
		t.Fatalf("submit --format csv after the SQL: %q (%v), want n=%s", out, err, wantN)
	}
	if !strings.Contains(errOut, "job ") {
		t.Fatalf("submit does not print the job id on stderr: %q", errOut)
	}

	// --detach returns the job id at once; jobs show takes flags after it.
	out, errOut, code = runCLI(t, bin, tmp, env, "submit", "--detach", "select count(*) from nation")
	job := strings.TrimSpace(out)
	if code != 0 || job == "" {
		t.Fatalf("submit --detach: exit %d, %q %s", code, out, errOut)
	}
	if _, err := coordinator.NewClient(st.APIURL, "").Wait(context.Background(), job, nil); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code = runCLI(t, bin, tmp, nil, "jobs", "show", job, "--coordinator", st.APIURL); code != 0 {
		t.Fatalf("jobs show JOB --coordinator URL: exit %d: %s", code, errOut)
	}

	// JSON keeps SELECT order and duplicate names.
	out, errOut, code = runCLI(t, bin, tmp, env, "sql", "--format", "json", "-c",
		"select n_name, n_name, n_nationkey as n_name from nation where n_nationkey = 7")
	if code != 0 {
		t.Fatalf("sql -c: exit %d: %s", code, errOut)
	}
	if got := strings.TrimSpace(out); got != `{"n_name":"GERMANY","n_name_1":"GERMANY","n_name_2":7}` {
		t.Fatalf("json output: %s", got)
	}

	// A script file with several statements, a multi-line one, comments,
	// a ';' inside a string and meta commands.
	script := filepath.Join(tmp, "q.sql")
	text := "-- a script\n\\format csv\nselect count(*) as n\n  from lineitem;\n" +
		"select r_name from region where r_name <> 'a;b' order by r_name limit 2; /* done */\n"
	if err := os.WriteFile(script, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runCLI(t, bin, tmp, env, "sql", "-f", script)
	if code != 0 {
		t.Fatalf("sql -f: exit %d: %s", code, errOut)
	}
	if want := "n\n" + wantN + "\nr_name\nAFRICA\nAMERICA\n"; out != want {
		t.Fatalf("sql -f output:\n%s\nwant:\n%s", out, want)
	}

	// SQL on stdin (not a terminal), table format with types and row count.
	cmd := exec.Command(bin, "sql")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader("select count(*) as n from lineitem;\n\\d\n\\d region\n")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("sql < stdin: %v: %s", err, e.String())
	}
	for _, w := range []string{"bigint", wantN, "(1 row)", "lineitem", "(8 tables)", "r_regionkey", "varchar"} {
		if !strings.Contains(o.String(), w) {
			t.Fatalf("sql < stdin: output lacks %q:\n%s", w, o.String())
		}
	}

	// Piped table output is never fitted: every column of a wide row; a
	// script's .maxwidth fits it (cut values, hidden middle columns).
	wide := "select * from lineitem order by l_orderkey, l_linenumber limit 2"
	out, errOut, code = runCLI(t, bin, tmp, env, "sql", "-c", wide)
	if code != 0 || !strings.Contains(out, "l_comment") || !strings.Contains(out, "l_orderkey") || !strings.Contains(out, "(2 rows)\n") {
		t.Fatalf("piped wide table: exit %d, %s\n%s", code, errOut, out)
	}
	fitted := filepath.Join(tmp, "fit.sql")
	if err := os.WriteFile(fitted, []byte(".maxwidth 60\n"+wide+";\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runCLI(t, bin, tmp, env, "sql", "-f", fitted)
	if code != 0 || !strings.Contains(out, "l_orderkey") || !strings.Contains(out, "l_comment") ||
		!strings.Contains(out, "(2 rows; 13 of 16 columns hidden, .maxwidth 0 shows all)") {
		t.Fatalf(".maxwidth 60: exit %d, %s\n%s", code, errOut, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if n := len([]rune(line)); n > 60 && !strings.HasPrefix(line, "(") {
			t.Fatalf(".maxwidth 60: a line of %d characters:\n%s", n, out)
		}
	}

	// A failing statement stops the script with its code and a non-zero exit.
	_, errOut, code = runCLI(t, bin, tmp, env, "sql", "-c", "select 1 from nation limit 1; select nosuch from nation; select 2 from nation")
	if code == 0 || !strings.Contains(errOut, "SL003") {
		t.Fatalf("failing script: exit %d, stderr %q", code, errOut)
	}

	// A failing statement of a file is named by the file and the line it
	// starts on, and its error shows the line and a caret, as psql does.
	bad := filepath.Join(tmp, "bad.sql")
	if err := os.WriteFile(bad, []byte("select 1;\n\n-- next\nselect n_name,\n       nosuch\n  from nation;\nselect 2;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runCLI(t, bin, tmp, env, "sql", "-f", bad)
	wantWhere := bad + ":4: SL003"
	caret := "LINE 2:        nosuch\n               ^"
	if code == 0 || !strings.Contains(errOut, wantWhere) || !strings.Contains(errOut, caret) {
		t.Fatalf("failing file: exit %d, stderr %q, want %q and %q", code, errOut, wantWhere, caret)
	}
}

// slowQuery runs long enough on SF 0.01 to be interrupted.
const slowQuery = `select count(*) from lineitem a, lineitem b where a.l_orderkey + b.l_orderkey = 3`

// TestSubmitCtrlC: SIGINT on `sluice submit` cancels the job on the
// coordinator and the CLI exits 130.
func TestSubmitCtrlC(t *testing.T) {
	bin := sluiceBin(t)
	st, _ := shellStack(t, func(o *local.Options) {
		o.WrapInvoker = func(inv coordinator.Invoker) coordinator.Invoker { return slowInvoker{inv, 200 * time.Millisecond} }
	})
	cmd := exec.Command(bin, "submit", slowQuery, "--coordinator", st.APIURL)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	jobc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if j, ok := strings.CutPrefix(sc.Text(), "job "); ok {
				jobc <- strings.TrimSpace(j)
			}
		}
	}()
	var job string
	select {
	case job = <-jobc:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("submit printed no job id")
	}
	time.Sleep(300 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("submit after SIGINT: %v, want exit 130", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js, err := coordinator.NewClient(st.APIURL, "").Wait(ctx, job, nil)
	if err != nil {
		t.Fatal(err)
	}
	if js.State != coordinator.StateCancelled {
		t.Fatalf("job %s after Ctrl-C: %s, want cancelled", job, js.State)
	}
}

// tmux drives a real terminal.
type tmux struct {
	t       *testing.T
	socket  string
	session string
}

func (m *tmux) run(args ...string) string {
	m.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", m.socket}, args...)...).CombinedOutput()
	if err != nil {
		m.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (m *tmux) screen() string {
	return m.run("capture-pane", "-p", "-J", "-S", "-200", "-t", m.session)
}

// send types text literally (tmux would read a trailing ';' as a command
// separator) and then presses the given keys.
func (m *tmux) send(text string, keys ...string) {
	if strings.HasSuffix(text, ";") {
		text = strings.TrimSuffix(text, ";") + `\;`
	}
	if text != "" {
		m.run("send-keys", "-t", m.session, "-l", "--", text)
	}
	if len(keys) > 0 {
		m.run(append([]string{"send-keys", "-t", m.session}, keys...)...)
	}
}

// waitFor waits until the screen holds want n times.
func (m *tmux) waitFor(want string, n int) string {
	m.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		s := m.screen()
		if strings.Count(s, want) >= n {
			return s
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("screen never showed %q (%d times):\n%s", want, n, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestShellTerminal drives the interactive shell in tmux: a query, a
// multi-line statement, \timing, \d, history recall, and Ctrl-C cancelling
// a running query on the coordinator and returning to the prompt.
func TestShellTerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (.ci/run installs it)")
	}
	bin := sluiceBin(t)
	st, dir := shellStack(t, func(o *local.Options) {
		o.WrapInvoker = func(inv coordinator.Invoker) coordinator.Invoker { return slowInvoker{inv, 100 * time.Millisecond} }
	})
	db := openDuck(t, dir)
	home := t.TempDir()
	m := &tmux{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock"), session: "sluice"}
	// The shell runs under sh so its exit status stays on the screen.
	m.run("new-session", "-d", "-s", m.session, "-x", "160", "-y", "50",
		fmt.Sprintf("env HOME=%s TERM=xterm %s sql --coordinator %s; echo shell exited $?; sleep 600", home, bin, st.APIURL))
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", m.socket, "kill-server").Run() })
	m.waitFor("sluice> ", 1)

	wantN := fmt.Sprint(duckRows(t, db, "select count(*) from orders")[0][0])
	m.send("select count(*) as n_orders from orders;", "Enter")
	s := m.waitFor("(1 row)", 1)
	if !strings.Contains(s, wantN) {
		t.Fatalf("count(*) from orders: want %s:\n%s", wantN, s)
	}

	m.send(`\timing on`, "Enter")
	m.waitFor("Timing is on.", 1)
	m.send("select r_name", "Enter")
	m.waitFor("     -> ", 1)
	m.send("from region order by r_name", "Enter")
	m.send("limit 1;", "Enter")
	s = m.waitFor("(1 row)", 2)
	if !strings.Contains(s, "AFRICA") || !strings.Contains(s, "Time: ") {
		t.Fatalf("multi-line statement with timing:\n%s", s)
	}

	m.send(`\d`, "Enter")
	m.waitFor("(8 tables)", 1)

	// A wide result is fitted to the terminal's 160 columns.
	m.send("select * from lineitem limit 3;", "Enter")
	s = m.waitFor("columns hidden, .maxwidth 0 shows all)", 1)
	for _, line := range strings.Split(s, "\n") {
		if n := len([]rune(line)); n > 160 {
			t.Fatalf("a line of %d characters in a 160-column terminal:\n%s", n, s)
		}
	}

	// Tab completes a table after FROM and a column of it after `table.`.
	m.send("select count(distinct lineitem.l_shipm", "Tab")
	m.send(") as n_modes from linei", "Tab")
	m.send(";", "Enter")
	s = m.waitFor("select count(distinct lineitem.l_shipmode) as n_modes from lineitem;", 1)
	wantModes := fmt.Sprint(duckRows(t, db, "select count(distinct l_shipmode) from lineitem")[0][0])
	s = m.waitFor("n_modes", 2)
	if !strings.Contains(s, "│ "+wantModes+" ") && !strings.Contains(s, " "+wantModes+" │") {
		t.Fatalf("completed statement: want %s modes:\n%s", wantModes, s)
	}

	// Ctrl-C cancels the running query on the coordinator.
	m.send(slowQuery+";", "Enter")
	time.Sleep(time.Second)
	m.send("", "C-c")
	s = m.waitFor("cancelled job ", 1)
	var job string
	for _, line := range strings.Split(s, "\n") {
		if j, ok := strings.CutPrefix(strings.TrimSpace(line), "cancelled job "); ok {
			job = strings.TrimSpace(j)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	js, err := coordinator.NewClient(st.APIURL, "").Wait(ctx, job, nil)
	if err != nil {
		t.Fatalf("job %q: %v", job, err)
	}
	if js.State != coordinator.StateCancelled {
		t.Fatalf("job %s after Ctrl-C in the shell: %s", job, js.State)
	}

	// Still in the shell: the next statement runs.
	m.send("select count(*) as n_nation from nation;", "Enter")
	s = m.waitFor("(1 row)", 3)
	if !strings.Contains(s, "n_nation") {
		t.Fatalf("the shell did not come back after Ctrl-C:\n%s", s)
	}
	m.send(`\q`, "Enter")
	m.waitFor("shell exited 0", 1)
	hist, err := os.ReadFile(filepath.Join(home, ".sluice_history"))
	if err != nil || !strings.Contains(string(hist), "from region order by r_name") {
		t.Fatalf("history: %v %q", err, hist)
	}
}
