package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/chzyer/readline"
	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/sluicedb/sluice/coordinator"
)

// stopSignalsKey names, in the app's Metadata, the function that detaches
// the root context from SIGINT: the shell handles Ctrl-C itself (cancel the
// running query, stay in the shell).
const stopSignalsKey = "stop-signals"

func sqlCommand(stackFlags []cli.Flag) *cli.Command {
	return &cli.Command{
		Name:  "sql",
		Usage: "an interactive SQL shell against a coordinator (--coordinator URL) or the embedded stack (--local)",
		Description: `Statements end with ';' and may span lines. In a terminal it has line editing and a
persistent history; -c runs SQL given as an argument, -f a file, and SQL piped on stdin runs
as a script. Ctrl-C cancels the running query on the coordinator and returns to the prompt.

Meta commands: \d (list tables), \d TABLE (describe), \timing [on|off], \format table|csv|json,
.maxwidth [N], .maxrows [N], \? (help), \q (quit). Tab completes keywords, functions, tables and
columns. In a terminal, tables are fitted to its width: long values are cut with '…' and middle
columns hidden; piped output is never fitted.`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "coordinator", EnvVars: []string{"SLUICE_COORDINATOR"}, Usage: "coordinator API URL"},
			&cli.StringFlag{Name: "token", EnvVars: []string{"SLUICE_TOKEN"}, Usage: "bearer token of the coordinator API"},
			&cli.BoolFlag{Name: "local", Usage: "start the embedded stack (with --data) instead of connecting to a coordinator"},
			&cli.StringFlag{Name: "data", Usage: "with --local: folder of table folders to load"},
			&cli.StringFlag{Name: "command", Aliases: []string{"c"}, Usage: "run this SQL (one or more statements) and exit"},
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "run the statements of this file and exit"},
			&cli.StringFlag{Name: "history", EnvVars: []string{"SLUICE_HISTORY"}, Usage: "history file (default ~/.sluice_history)"},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "table, csv or json"},
			adaptiveFlag(),
			&cli.BoolFlag{Name: "stats", Usage: "print what each job did on stderr"},
		}, stackFlags...),
		Action: func(c *cli.Context) error {
			if stop, ok := c.App.Metadata[stopSignalsKey].(func()); ok {
				stop()
			}
			ctx, cancel := context.WithCancel(c.Context)
			defer cancel()
			term := make(chan os.Signal, 1)
			signal.Notify(term, syscall.SIGTERM, syscall.SIGHUP)
			defer signal.Stop(term)
			go func() {
				select {
				case <-term:
					cancel()
				case <-ctx.Done():
				}
			}()
			var cl *coordinator.Client
			switch {
			case c.Bool("local"):
				st, err := startStack(c, stackFlags)
				if err != nil {
					return err
				}
				defer st.Close()
				if d := c.String("data"); d != "" {
					if _, err := st.LoadDir(ctx, d); err != nil {
						return err
					}
				}
				cl = coordinator.NewClient(st.APIURL, "")
			case c.String("coordinator") != "":
				cl = coordinator.NewClient(httpEndpoint(c.String("coordinator")), c.String("token"))
			default:
				return errors.New("no coordinator: give --coordinator URL (or SLUICE_COORDINATOR), or --local --data DIR")
			}
			sh := &shell{cl: cl, out: os.Stdout, errw: os.Stderr, format: c.String("format"),
				adaptive: c.Bool("adaptive"), stats: c.Bool("stats"), maxWidth: -1, maxRows: maxTableRows}
			if err := checkFormat(sh.format); err != nil {
				return err
			}
			switch {
			case c.IsSet("command"):
				return sh.script(ctx, strings.NewReader(c.String("command")), "")
			case c.IsSet("file"):
				f, err := os.Open(c.String("file"))
				if err != nil {
					return err
				}
				defer f.Close()
				return sh.script(ctx, f, c.String("file"))
			case !isTerminal(os.Stdin):
				return sh.script(ctx, os.Stdin, "<stdin>")
			}
			hist := c.String("history")
			if hist == "" {
				if home, err := os.UserHomeDir(); err == nil {
					hist = filepath.Join(home, ".sluice_history")
				}
			}
			return sh.interactive(ctx, hist)
		},
	}
}

func checkFormat(f string) error {
	switch f {
	case "table", "csv", "json":
		return nil
	}
	return fmt.Errorf("unknown output format %q (want table, csv or json)", f)
}

// shell runs statements and meta commands against one coordinator.
type shell struct {
	cl        *coordinator.Client
	out, errw io.Writer
	format    string
	timing    bool
	adaptive  bool
	stats     bool
	quit      bool
	// maxWidth and maxRows fit tables (.maxwidth, .maxrows); maxWidth -1
	// is the terminal's width when out is a terminal, else no limit.
	maxWidth, maxRows int
}

// isMeta reports whether a line is a meta command: \d, \q, ... and the
// DuckDB-style .maxwidth and .maxrows (no SQL statement starts with '.').
func isMeta(line string) bool {
	l := strings.TrimSpace(line)
	return strings.HasPrefix(l, `\`) || strings.HasPrefix(l, ".")
}

// fit is the table fitting of the shell's next result.
func (sh *shell) fit() tableFit {
	f := tableFit{maxWidth: sh.maxWidth, maxRows: sh.maxRows}
	if f.maxWidth < 0 {
		f.maxWidth = terminalWidth(sh.out)
	}
	return f
}

// script runs every statement of r in order and stops at the first error
// (as psql -v ON_ERROR_STOP=1 and duckdb -bail do). Ctrl-C cancels the
// running statement and ends the script with errInterrupted.
//
// name is the script's name in errors ("q.sql", "<stdin>"), "" for -c: a
// failing statement is then named by the file and the line it starts on
// (q.sql:12), and its error shows the statement's line and a caret.
func (sh *shell) script(ctx context.Context, r io.Reader, name string) error {
	var buf strings.Builder
	bufLine, lineNo := 1, 0 // the line buf starts on; lines read
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	runAll := func(text string, stmts []string) error {
		off := 0
		for _, s := range stmts {
			if i := strings.Index(text[off:], s); i >= 0 {
				off += i
			}
			// The statement runs without its leading comments, so that it
			// is named by the line its SQL starts on.
			if c := leadingComments(s); c > 0 {
				off += c
				s = s[c:]
			}
			if err := sh.run(ctx, s); err != nil {
				where := ""
				if name != "" {
					where = fmt.Sprintf("%s:%d", name, bufLine+strings.Count(text[:off], "\n"))
				}
				return &sqlError{sql: s, where: where, err: err}
			}
			off += len(s)
		}
		return nil
	}
	for sc.Scan() && !sh.quit {
		line := sc.Text()
		lineNo++
		if onlyComments(buf.String()) && isMeta(line) {
			buf.Reset()
			bufLine = lineNo + 1
			if err := sh.meta(ctx, strings.TrimSpace(line)); err != nil {
				return err
			}
			continue
		}
		if buf.Len() == 0 {
			bufLine = lineNo
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		text := buf.String()
		stmts, rest := splitStatements(text)
		if err := runAll(text, stmts); err != nil {
			return err
		}
		buf.Reset()
		buf.WriteString(rest)
		bufLine = lineNo + 1 - strings.Count(rest, "\n")
	}
	if err := sc.Err(); err != nil {
		return err
	}
	// A last statement without ';' still runs, as in psql -c.
	if s := strings.TrimSpace(buf.String()); s != "" && !sh.quit && !onlyComments(s) {
		return runAll(buf.String(), []string{s})
	}
	return nil
}

// interactive is the read-eval-print loop on a terminal.
func (sh *shell) interactive(ctx context.Context, history string) error {
	comp := newCompleter(func(ctx context.Context) (catalogNames, error) {
		ts, err := sh.cl.Tables(ctx)
		if err != nil {
			return nil, err
		}
		cat := make(catalogNames, len(ts))
		for _, t := range ts {
			cols := make([]string, len(t.Columns))
			for i, c := range t.Columns {
				cols[i] = c.Name
			}
			cat[t.Name] = cols
		}
		return cat, nil
	})
	rl, err := readline.NewEx(&readline.Config{
		AutoComplete:           comp,
		Prompt:                 "sluice> ",
		HistoryFile:            history,
		DisableAutoSaveHistory: true,
		InterruptPrompt:        "^C",
		EOFPrompt:              `\q`,
		HistorySearchFold:      true,
	})
	if err != nil {
		return err
	}
	defer rl.Close()
	fmt.Fprintln(sh.errw, `sluice shell: end statements with ';', \? for help, \q to quit`)
	var buf strings.Builder
	for !sh.quit {
		if buf.Len() == 0 {
			rl.SetPrompt("sluice> ")
		} else {
			rl.SetPrompt("     -> ")
		}
		comp.setTyped(buf.String())
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			buf.Reset() // Ctrl-C at the prompt drops the statement being typed
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if buf.Len() == 0 && isMeta(line) {
			_ = rl.SaveHistory(line)
			if err := sh.meta(ctx, strings.TrimSpace(line)); err != nil {
				fmt.Fprintln(sh.errw, "error:", err)
			}
			continue
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		stmts, rest := splitStatements(buf.String())
		if len(stmts) > 0 {
			_ = rl.SaveHistory(strings.TrimSpace(strings.TrimSuffix(buf.String(), rest)))
		}
		buf.Reset()
		if strings.TrimSpace(rest) != "" {
			buf.WriteString(rest)
		}
		if len(stmts) > 0 {
			comp.invalidate() // DDL, CTAS or COPY may have changed the catalog
		}
		for _, s := range stmts {
			if err := sh.run(ctx, s); err != nil {
				var intr *errInterrupted
				if errors.As(err, &intr) {
					fmt.Fprintf(sh.errw, "cancelled job %s\n", intr.job)
					break
				}
				fmt.Fprintln(sh.errw, "error:", &sqlError{sql: s, err: err})
				break
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// run executes one statement; SIGINT while it runs cancels its job on the
// coordinator.
func (sh *shell) run(ctx context.Context, sql string) error {
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	go func() {
		select {
		case <-sig:
			cancel()
		case <-qctx.Done():
		}
	}()
	start := time.Now()
	fit := sh.fit()
	err := execQuery(qctx, sh.cl, sql, queryOpts{format: sh.format, adaptive: sh.adaptive, stats: sh.stats, quiet: true,
		fit: &fit}, sh.out, sh.errw)
	if sh.timing {
		fmt.Fprintf(sh.errw, "Time: %.3f ms\n", float64(time.Since(start).Microseconds())/1000)
	}
	return err
}

// meta runs a backslash command.
func (sh *shell) meta(ctx context.Context, line string) error {
	fields := strings.Fields(strings.TrimSuffix(line, ";"))
	cmd, args := fields[0], fields[1:]
	switch cmd {
	case `\q`, `\quit`:
		sh.quit = true
	case `\?`, `\help`, `\h`:
		fmt.Fprint(sh.out, `\d              list tables
\d TABLE        describe a table
\timing [on|off] print the time each statement takes
\format FORMAT  output format: table, csv or json
.maxwidth [N]   fit tables to N columns (0: no limit; no N: the terminal's width)
.maxrows [N]    show at most N rows of a table, eliding the middle (0: all; default 40)
\q              quit
`)
	case `\timing`:
		switch {
		case len(args) == 0:
			sh.timing = !sh.timing
		case args[0] == "on":
			sh.timing = true
		case args[0] == "off":
			sh.timing = false
		default:
			return fmt.Errorf(`\timing: want on or off, got %q`, args[0])
		}
		state := "off"
		if sh.timing {
			state = "on"
		}
		fmt.Fprintf(sh.errw, "Timing is %s.\n", state)
	case `\format`, `\pset`:
		if cmd == `\pset` && len(args) > 0 && args[0] == "format" {
			args = args[1:]
		}
		if len(args) != 1 {
			return fmt.Errorf(`\format: want one of table, csv, json`)
		}
		if err := checkFormat(args[0]); err != nil {
			return err
		}
		sh.format = args[0]
		fmt.Fprintf(sh.errw, "Output format is %s.\n", sh.format)
	case `.maxwidth`, `\maxwidth`:
		n, err := metaCount(cmd, args, -1)
		if err != nil {
			return err
		}
		sh.maxWidth = n
		if w := sh.fit().maxWidth; w > 0 {
			fmt.Fprintf(sh.errw, "Tables are fitted to %d columns.\n", w)
		} else {
			fmt.Fprintln(sh.errw, "Tables are not fitted to a width.")
		}
	case `.maxrows`, `\maxrows`:
		n, err := metaCount(cmd, args, maxTableRows)
		if err != nil {
			return err
		}
		sh.maxRows = n
		if n > 0 {
			fmt.Fprintf(sh.errw, "Tables show at most %d rows.\n", n)
		} else {
			fmt.Fprintln(sh.errw, "Tables show all rows.")
		}
	case `\d`, `\dt`:
		if len(args) > 0 {
			return sh.describe(ctx, args[0])
		}
		ts, err := sh.cl.Tables(ctx)
		if err != nil {
			return err
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
		tw := tabwriter.NewWriter(sh.out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "name\tformat\tcolumns\tfiles\trows\tsize\tlocation")
		for _, t := range ts {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", t.Name, t.Format, len(t.Columns), t.Files, t.Rows,
				humanize.IBytes(uint64(t.Bytes)), t.Location)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(sh.out, "(%d tables)\n", len(ts))
	default:
		return fmt.Errorf("unknown meta command %s (\\? lists them)", cmd)
	}
	return nil
}

// metaCount reads the one optional count argument of .maxwidth and
// .maxrows; none gives def.
func metaCount(cmd string, args []string, def int) (int, error) {
	switch len(args) {
	case 0:
		return def, nil
	case 1:
		if n, err := strconv.Atoi(args[0]); err == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s: want one count, 0 or more, got %q", cmd, strings.Join(args, " "))
}

func (sh *shell) describe(ctx context.Context, name string) error {
	t, err := sh.cl.Table(ctx, strings.ToLower(name))
	if err != nil {
		return err
	}
	rows := fmt.Sprint(t.Rows)
	if t.RowsEstimated {
		rows = "~" + rows + " (estimated)"
	}
	fmt.Fprintf(sh.out, "table %s (%s) at %s: %s rows in %d files, %s\n", t.Name, t.Format, t.Location, rows, t.Files,
		humanize.IBytes(uint64(t.Bytes)))
	tw := tabwriter.NewWriter(sh.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "column\ttype\tnullable")
	for _, c := range t.Columns {
		fmt.Fprintf(tw, "%s\t%s\t%v\n", c.Name, c.Type.SQLName(), c.Nullable)
	}
	return tw.Flush()
}

// splitStatements cuts text into complete statements ended by ';' (outside
// quotes, quoted identifiers and comments) and the incomplete rest. Empty
// statements are dropped.
func splitStatements(text string) (stmts []string, rest string) {
	start := 0
	for i := 0; i < len(text); i++ {
		switch ch := text[i]; {
		case ch == '\'' || ch == '"':
			j := i + 1
			for ; j < len(text); j++ {
				if text[j] == ch {
					if j+1 < len(text) && text[j+1] == ch { // doubled quote inside
						j++
						continue
					}
					break
				}
			}
			if j >= len(text) {
				return stmts, text[start:]
			}
			i = j
		case ch == '-' && i+1 < len(text) && text[i+1] == '-':
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				return stmts, text[start:]
			}
			i += j
		case ch == '/' && i+1 < len(text) && text[i+1] == '*':
			j := strings.Index(text[i+2:], "*/")
			if j < 0 {
				return stmts, text[start:]
			}
			i += j + 3
		case ch == ';':
			if s := strings.TrimSpace(text[start:i]); s != "" && !onlyComments(s) {
				stmts = append(stmts, s)
			}
			start = i + 1
		}
	}
	return stmts, text[start:]
}

// onlyComments reports whether s holds nothing but SQL comments (-- and
// /* */) and space.
func onlyComments(s string) bool {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r':
		case strings.HasPrefix(s[i:], "--"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return true
			}
			i += j
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return true
			}
			i += j + 3
		default:
			return false
		}
	}
	return true
}

// leadingComments is the length of the comments and space s starts with.
func leadingComments(s string) int {
	i := 0
	for i < len(s) {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r':
			i++
		case strings.HasPrefix(s[i:], "--"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return len(s)
			}
			i += j + 1
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return len(s)
			}
			i += j + 4
		default:
			return i
		}
	}
	return i
}
