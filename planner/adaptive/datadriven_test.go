package adaptive

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt with the re-planner's output")

// TestReplanGoldens runs the re-planner cases of testdata/*.txt, each a
// sequence of directives in the style of cockroach's datadriven tests:
//
//	<command> [key=value ...]
//	<input lines>
//	----
//	<expected output>
//	<blank line>
//
// Commands:
//
//	table <name> rows=R bytes=B     input: one "<column> <type>" a line
//	plan [partitions=N] [broadcast=B]  input: SQL; output: the plan and its tasks
//	config key=value ...            adaptive.Config fields: target, broadcast,
//	                                unbroadcast, skew-factor, skew-min-bytes,
//	                                get-budget, parallelism, min-partition-bytes,
//	                                split-bytes, max-split-bytes,
//	                                inline-scan-bytes, runtime-filters,
//	                                runtime-filter-probe-bytes, sizes (MiB,
//	                                comma-separated), default-size (MiB),
//	                                optimize, function-memory (MiB)
//	finish stage=N rows=R bytes=B [objects=O] [maps=M]
//	                                the stage finished with R rows and B bytes
//	                                spread evenly over its partitions (O map
//	                                outputs each, default 4) from M data
//	                                objects (default: the most of any
//	                                partition); input lines
//	                                "part=P rows=R bytes=B [objects=O]" override
//	                                single partitions; input lines
//	                                "summary col=C rows=R [nulls=N] [min=A max=B]
//	                                [values=v1,v2,...]" give the summary of
//	                                output column C (values: an exact set)
//	running stage=N                 the stage has tasks in flight
//	scan stage=N bytes=B splits=S [files=F]
//	                                the driver measured B bytes of table data
//	                                in S static splits for scan stage N
//	                                (State.Scans), listing F files (a table
//	                                small enough for inline-scans); any other
//	                                key=N sets the ScanSize field of that
//	                                JSON name ("-" for "_")
//	scan-tasks stage=N [split-bytes=B]
//	                                input: one "<file> <row group bytes>..." a
//	                                line; output: the tasks the stage's task
//	                                plan cuts those files into
//	                                (TaskPlan.ScanSplits), one a line; B
//	                                defaults to Config.SplitBytes
//	replan [expect=r1,r2] [expect-not=r3]
//	                                run Rules(); output: each rule fired with its
//	                                note, then the plan and tasks after. expect=
//	                                and expect-not= are checked even with -update.
//
// go test ./planner/adaptive -run TestReplanGoldens -update rewrites the
// expected outputs.
func TestReplanGoldens(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/*.txt (%v)", err)
	}
	fired := map[string]bool{}
	notFired := map[string]bool{}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runFile(t, f, fired, notFired) })
	}
	for _, r := range Rules() {
		if !fired[r.Name()] {
			t.Errorf("rule %s has no golden case where it fires (expect=%s)", r.Name(), r.Name())
		}
		if !notFired[r.Name()] {
			t.Errorf("rule %s has no golden case where it does not fire (expect-not=%s)", r.Name(), r.Name())
		}
	}
}

type directive struct {
	pre    []string // comment lines before it
	line   int
	cmd    string
	args   map[string]string
	pos    []string // positional arguments
	input  string
	output string
}

func parseFile(t *testing.T, path string) (ds []*directive) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var pre []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "#") {
			pre = append(pre, l)
			continue
		}
		if strings.TrimSpace(l) == "" {
			continue
		}
		d := &directive{pre: pre, line: i + 1, args: map[string]string{}}
		pre = nil
		fields := strings.Fields(l)
		d.cmd = fields[0]
		for _, a := range fields[1:] {
			if k, v, ok := strings.Cut(a, "="); ok {
				d.args[k] = v
			} else {
				d.pos = append(d.pos, a)
			}
		}
		var in []string
		for i++; i < len(lines) && lines[i] != "----"; i++ {
			in = append(in, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("%s:%d: %s without ----", path, d.line, d.cmd)
		}
		var out []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			out = append(out, lines[i])
		}
		d.input = strings.Join(in, "\n")
		d.output = strings.Join(out, "\n")
		ds = append(ds, d)
	}
	return ds
}

// goldenEnv is the state a test file builds up.
type goldenEnv struct {
	cat   goldenCatalog
	state *State
}

type goldenCatalog map[string]*planner.TableInfo

func (c goldenCatalog) Table(_ context.Context, name string) (*planner.TableInfo, error) {
	if t, ok := c[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("%q: %w", name, planner.ErrUnknownTable)
}

func runFile(t *testing.T, path string, fired, notFired map[string]bool) {
	ds := parseFile(t, path)
	env := &goldenEnv{cat: goldenCatalog{}}
	var rewritten strings.Builder
	for _, d := range ds {
		for _, l := range d.pre {
			rewritten.WriteString(l + "\n")
		}
		got, err := env.run(t, d, fired, notFired)
		if err != nil {
			got = "error: " + err.Error()
		}
		got = strings.TrimRight(got, "\n")
		if strings.Contains(got, "\n\n") {
			t.Fatalf("%s:%d: output has a blank line, which the format cannot hold:\n%s", path, d.line, got)
		}
		if !*update && got != d.output {
			t.Errorf("%s:%d: %s: output differs (run with -update to accept)\n--- got\n%s\n--- want\n%s", path, d.line, d.cmd, got, d.output)
		}
		rewritten.WriteString(d.header() + "\n")
		if d.input != "" {
			rewritten.WriteString(d.input + "\n")
		}
		rewritten.WriteString("----\n")
		if got != "" {
			rewritten.WriteString(got + "\n")
		}
		rewritten.WriteString("\n")
	}
	if *update {
		if err := os.WriteFile(path, []byte(strings.TrimRight(rewritten.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func (d *directive) header() string {
	parts := append([]string{d.cmd}, d.pos...)
	keys := make([]string, 0, len(d.args))
	for k := range d.args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+d.args[k])
	}
	return strings.Join(parts, " ")
}

func (d *directive) int(t *testing.T, key string, def int64) int64 {
	t.Helper()
	v, ok := d.args[key]
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("line %d: %s=%q: %v", d.line, key, v, err)
	}
	return n
}

var decimalRE = regexp.MustCompile(`^decimal\((\d+),(\d+)\)$`)

func parseType(s string) (plan.DataType, error) {
	switch s {
	case "int64":
		return plan.Int64Type, nil
	case "float64":
		return plan.Float64Type, nil
	case "string":
		return plan.StringType, nil
	case "date":
		return plan.DateType, nil
	case "bool":
		return plan.BoolType, nil
	}
	if m := decimalRE.FindStringSubmatch(s); m != nil {
		p, _ := strconv.Atoi(m[1])
		sc, _ := strconv.Atoi(m[2])
		return plan.DecimalType(p, sc), nil
	}
	return plan.DataType{}, fmt.Errorf("unknown type %q", s)
}

func (env *goldenEnv) run(t *testing.T, d *directive, fired, notFired map[string]bool) (string, error) {
	switch d.cmd {
	case "table":
		if len(d.pos) != 1 {
			return "", fmt.Errorf("table needs a name")
		}
		ti := &planner.TableInfo{Name: d.pos[0], Format: "parquet", Rows: d.int(t, "rows", 0), Bytes: d.int(t, "bytes", 0)}
		for _, l := range strings.Split(strings.TrimSpace(d.input), "\n") {
			f := strings.Fields(l)
			if len(f) != 2 {
				return "", fmt.Errorf("column line %q: want <name> <type>", l)
			}
			typ, err := parseType(f[1])
			if err != nil {
				return "", err
			}
			ti.Columns = append(ti.Columns, plan.Field{Name: f[0], Type: typ})
		}
		env.cat[ti.Name] = ti
		return "", nil
	case "plan":
		opts := planner.Options{Partitions: int(d.int(t, "partitions", 4)), BroadcastBytes: d.int(t, "broadcast", 0)}
		p, err := planner.Plan(context.Background(), d.input, env.cat, opts)
		if err != nil {
			return "", err
		}
		cfg := DefaultConfig()
		if env.state != nil {
			cfg = env.state.Config
		}
		env.state = &State{Graph: p.Graph, Done: map[int]*StageStats{}, Running: map[int]bool{},
			Tasks: InitialTaskPlans(p.Graph), Config: cfg}
		return env.state.FormatPlan(planner.FormatGraph), nil
	case "config":
		cfg := DefaultConfig()
		if env.state != nil {
			cfg = env.state.Config
		}
		cfg.TargetPartitionBytes = d.int(t, "target", cfg.TargetPartitionBytes)
		cfg.BroadcastBytes = d.int(t, "broadcast", cfg.BroadcastBytes)
		cfg.UnbroadcastBytes = d.int(t, "unbroadcast", cfg.UnbroadcastBytes)
		cfg.SkewMinBytes = d.int(t, "skew-min-bytes", cfg.SkewMinBytes)
		cfg.GetBudget = d.int(t, "get-budget", cfg.GetBudget)
		cfg.Parallelism = int(d.int(t, "parallelism", int64(cfg.Parallelism)))
		cfg.MinPartitionBytes = d.int(t, "min-partition-bytes", cfg.MinPartitionBytes)
		cfg.SplitBytes = d.int(t, "split-bytes", cfg.SplitBytes)
		cfg.MaxSplitBytes = d.int(t, "max-split-bytes", cfg.MaxSplitBytes)
		cfg.InlineScanBytes = d.int(t, "inline-scan-bytes", cfg.InlineScanBytes)
		cfg.RuntimeFilterProbeBytes = d.int(t, "runtime-filter-probe-bytes", cfg.RuntimeFilterProbeBytes)
		cfg.FunctionMemory = d.int(t, "function-memory", cfg.FunctionMemory>>20) << 20
		if v, ok := d.args["runtime-filters"]; ok {
			cfg.RuntimeFilters = v == "true"
		}
		if v, ok := d.args["skew-factor"]; ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return "", err
			}
			cfg.SkewFactor = f
		}
		if v, ok := d.args["sizes"]; ok {
			cfg.Sizing.Sizes = nil
			for _, m := range strings.Split(v, ",") {
				n, err := strconv.ParseInt(m, 10, 64)
				if err != nil {
					return "", err
				}
				cfg.Sizing.Sizes = append(cfg.Sizing.Sizes, n<<20)
			}
		}
		cfg.Sizing.Default = d.int(t, "default-size", cfg.Sizing.Default>>20) << 20
		if v, ok := d.args["optimize"]; ok {
			cfg.Sizing.Optimize = v
		}
		if env.state == nil {
			return "", fmt.Errorf("config before plan")
		}
		env.state.Config = cfg
		out := fmt.Sprintf("%+v", cfg)
		if len(cfg.Sizing.Sizes) == 0 {
			// The goldens from before size-functions print no sizing.
			out = out[:strings.Index(out, " Sizing:")] + "}"
			if cfg.FunctionMemory > 0 {
				out += fmt.Sprintf(" function memory %d MiB", cfg.FunctionMemory>>20)
			}
		}
		return out, nil
	case "scan":
		id, err := d.scanStage(t, env.state)
		if err != nil {
			return "", err
		}
		if env.state.Scans == nil {
			env.state.Scans = map[int]ScanSize{}
		}
		size := ScanSize{Bytes: d.int(t, "bytes", 0), Splits: int(d.int(t, "splits", 0))}
		if n := int(d.int(t, "files", -1)); n >= 0 {
			size.Files = []plan.ScanFile{}
			for i := 0; i < n; i++ {
				size.Files = append(size.Files, plan.ScanFile{Key: fmt.Sprintf("tables/t%d/f%d.parquet", id, i), Size: size.Bytes / int64(n)})
			}
		}
		if err := setScanFields(&size, d.args); err != nil {
			return "", err
		}
		env.state.Scans[id] = size
		return "", nil
	case "scan-tasks":
		id, err := d.scanStage(t, env.state)
		if err != nil {
			return "", err
		}
		var files []layout.File
		for _, l := range strings.Split(strings.TrimSpace(d.input), "\n") {
			fs := strings.Fields(l)
			if len(fs) == 0 {
				continue
			}
			var sizes []int64
			for _, f := range fs[1:] {
				n, err := strconv.ParseInt(f, 10, 64)
				if err != nil {
					return "", fmt.Errorf("file %s: row group bytes %q: %w", fs[0], f, err)
				}
				sizes = append(sizes, n)
			}
			files = append(files, file(fs[0], sizes...))
		}
		var out []string
		for i, task := range env.state.Tasks.Of(id).ScanSplits(files, nil, d.int(t, "split-bytes", env.state.Config.SplitBytes)) {
			out = append(out, fmt.Sprintf("task %d: %s", i, formatSplits([][]ScanSplit{task})))
		}
		return strings.Join(out, "\n"), nil
	case "finish", "running":
		if env.state == nil {
			return "", fmt.Errorf("%s before plan", d.cmd)
		}
		id := int(d.int(t, "stage", -1))
		st := env.state.Graph.Stage(id)
		if st == nil {
			return "", fmt.Errorf("no stage %d", id)
		}
		if d.cmd == "running" {
			env.state.Running[id] = true
			return "", nil
		}
		delete(env.state.Running, id)
		env.state.Done[id] = finishStats(t, d, st)
		s := env.state.Done[id]
		out := fmt.Sprintf("stage %d: rows=%d bytes=%d non-empty partitions=%d", id, s.Rows, s.Bytes, len(s.Partitions))
		if _, ok := d.args["maps"]; ok {
			out += fmt.Sprintf(" map objects=%d", s.MapObjects())
		}
		return out, nil
	case "replan":
		if env.state == nil {
			return "", fmt.Errorf("replan before plan")
		}
		fs, err := Replan(env.state, Rules())
		if err != nil {
			return "", err
		}
		var names []string
		var b strings.Builder
		if len(fs) == 0 {
			b.WriteString("rules fired: none\n")
		}
		for _, f := range fs {
			names = append(names, f.Rule)
			if f.Discarded != "" {
				fmt.Fprintf(&b, "rule %s: discarded: %s\n", f.Rule, f.Discarded)
				t.Errorf("line %d: rule %s discarded: %s", d.line, f.Rule, f.Discarded)
				continue
			}
			fmt.Fprintf(&b, "rule %s: %s\n", f.Rule, f.Note)
		}
		for _, want := range splitList(d.args["expect"]) {
			if !slices.Contains(names, want) {
				t.Errorf("line %d: expect=%s, but fired %v", d.line, want, names)
			}
			fired[want] = true
		}
		for _, not := range splitList(d.args["expect-not"]) {
			if slices.Contains(names, not) {
				t.Errorf("line %d: expect-not=%s, but it fired", d.line, not)
			}
			notFired[not] = true
		}
		b.WriteString("plan after:\n")
		b.WriteString(env.state.FormatPlan(planner.FormatGraph))
		return b.String(), nil
	}
	return "", fmt.Errorf("unknown command %q", d.cmd)
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// finishStats spreads rows and bytes evenly over the stage's output
// partitions (remainders to the first ones), then applies the input's
// per-partition overrides.
func finishStats(t *testing.T, d *directive, st *plan.Stage) *StageStats {
	n := 1
	if st.Output.Kind == plan.PartitionHash {
		n = st.Output.Count
	}
	rows, bytes, objects := d.int(t, "rows", 0), d.int(t, "bytes", 0), int(d.int(t, "objects", 4))
	parts := make([]PartitionStats, n)
	for p := range parts {
		r := rows / int64(n)
		if int64(p) < rows%int64(n) {
			r++
		}
		by := bytes / int64(n)
		if int64(p) < bytes%int64(n) {
			by++
		}
		parts[p] = PartitionStats{Partition: p, Rows: r, Bytes: by, Objects: objects}
	}
	for _, l := range strings.Split(d.input, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(l), "summary") {
			continue // summaryLines
		}
		o := &directive{line: d.line, args: map[string]string{}}
		for _, a := range strings.Fields(l) {
			if k, v, ok := strings.Cut(a, "="); ok {
				o.args[k] = v
			}
		}
		p := int(o.int(t, "part", -1))
		if p < 0 || p >= n {
			t.Fatalf("line %d: partition %d outside 0..%d", d.line, p, n-1)
		}
		parts[p] = PartitionStats{Partition: p, Rows: o.int(t, "rows", 0), Bytes: o.int(t, "bytes", 0), Objects: int(o.int(t, "objects", int64(objects)))}
	}
	s := &StageStats{Objects: int(d.int(t, "maps", 0)), Summaries: summaryLines(t, d, st)}
	for _, ps := range parts {
		if ps.Rows == 0 && ps.Bytes == 0 {
			continue
		}
		s.Partitions = append(s.Partitions, ps)
		s.Rows += ps.Rows
		s.Bytes += ps.Bytes
	}
	return s
}

// summaryLines parses the "summary" input lines of a finish directive.
func summaryLines(t *testing.T, d *directive, st *plan.Stage) []plan.ColumnSummary {
	var out []plan.ColumnSummary
	for _, l := range strings.Split(d.input, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != "summary" {
			continue
		}
		o := &directive{line: d.line, args: map[string]string{}}
		for _, a := range f[1:] {
			if k, v, ok := strings.Cut(a, "="); ok {
				o.args[k] = v
			}
		}
		c := int(o.int(t, "col", -1))
		if c < 0 || c >= len(st.Root.Schema) {
			t.Fatalf("line %d: summary of column %d of %d", d.line, c, len(st.Root.Schema))
		}
		typ := st.Root.Schema[c].Type
		val := func(s string) plan.Value {
			switch typ.ID {
			case plan.String:
				return plan.Value{S: s}
			case plan.Date:
				days, err := plan.ParseDate(s)
				if err != nil {
					t.Fatalf("line %d: %v", d.line, err)
				}
				return plan.Value{I: int64(days)}
			}
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatalf("line %d: %v", d.line, err)
			}
			return plan.Value{I: n}
		}
		sum := plan.ColumnSummary{Column: c, Type: typ, Rows: o.int(t, "rows", 0), Nulls: o.int(t, "nulls", 0)}
		if v, ok := o.args["min"]; ok {
			sum.HasRange, sum.Min, sum.Max = true, val(v), val(o.args["max"])
		}
		if kib, ok := o.args["bloom"]; ok {
			// A Bloom filter of that many KiB (its bits do not matter to
			// a plan).
			n, err := strconv.Atoi(kib)
			if err != nil {
				t.Fatalf("line %d: bloom=%s: %v", d.line, kib, err)
			}
			sum.Bloom = make([]byte, n<<10)
		}
		if vs, ok := o.args["values"]; ok {
			sum.Exact = true
			for _, v := range splitList(vs) {
				sum.Values = append(sum.Values, val(v))
			}
		}
		out = append(out, sum)
	}
	return out
}

// setScanFields sets the int fields of size named by the scan directive's
// other keys (a field's JSON name, "_" written "-"), so that a rule that
// needs a new measurement adds a ScanSize field and its goldens, and no
// line here.
func setScanFields(size *ScanSize, args map[string]string) error {
	v := reflect.ValueOf(size).Elem()
	for k, val := range args {
		switch k {
		case "stage", "bytes", "splits", "files":
			continue
		}
		set := false
		for i := 0; i < v.NumField(); i++ {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			if strings.ReplaceAll(name, "_", "-") != k || !v.Field(i).CanInt() {
				continue
			}
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return fmt.Errorf("scan %s=%q: %w", k, val, err)
			}
			v.Field(i).SetInt(n)
			set = true
		}
		if !set {
			return fmt.Errorf("scan: no ScanSize int field %s", k)
		}
	}
	return nil
}

// scanStage returns the stage= of a scan or scan-tasks directive, which
// must name a scan stage of the planned state.
func (d *directive) scanStage(t *testing.T, s *State) (int, error) {
	if s == nil {
		return 0, fmt.Errorf("%s before plan", d.cmd)
	}
	id := int(d.int(t, "stage", -1))
	if st := s.Graph.Stage(id); st == nil || !ScanStage(st) {
		return 0, fmt.Errorf("stage %d scans no table", id)
	}
	return id, nil
}
