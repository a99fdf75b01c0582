package main

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluicedb/sluice/coordinator"
)

// TestKnobs: every knob has a flag name, an environment variable and a help
// text, no two share a name or a variable, and every field it points at has
// a flag type.
func TestKnobs(t *testing.T) {
	names, envs := map[string]bool{}, map[string]bool{}
	for _, k := range knobs {
		if k.name == "" || k.env == "" || strings.TrimSpace(k.usage) == "" {
			t.Errorf("knob %q: flag name, env name and help text are all required (env %q, usage %q)", k.name, k.env, k.usage)
		}
		if want := "SLUICE_" + strings.ToUpper(strings.ReplaceAll(k.name, "-", "_")); k.env != want {
			t.Errorf("knob %s: env %q, want %q (README: the flag's name in capitals)", k.name, k.env, want)
		}
		if names[k.name] {
			t.Errorf("knob %s declared twice", k.name)
		}
		if envs[k.env] {
			t.Errorf("env %s names two knobs", k.env)
		}
		names[k.name], envs[k.env] = true, true
		if k.scope == 0 {
			t.Errorf("knob %s is on no command", k.name)
		}
		if k.field == nil {
			t.Errorf("knob %s sets no field", k.name)
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("knob %s: %v", k.name, r)
				}
			}()
			k.flag(false)
			k.flag(true)
		}()
		var s settings
		if _, isInt64 := k.field(&s).(*int64); k.bytes && !isInt64 {
			t.Errorf("knob %s: a byte size on a %T field", k.name, k.field(&s))
		}
	}
}

// TestKnobNamesKept: the flag and env names users know (README, docs,
// deploy files) stay: each is still a knob, or, for the env names, still
// the knob's variable.
func TestKnobNamesKept(t *testing.T) {
	kept := map[string]string{ // flag -> env ("" had none before the table)
		"adaptive": "SLUICE_ADAPTIVE", "functions": "", "partitions": "", "function-memory": "SLUICE_FUNCTION_MEMORY",
		"prices": "SLUICE_PRICES", "split-bytes": "", "max-split-bytes": "", "inline-scan-bytes": "", "limit-early-stop": "",
		"plan-broadcast-bytes": "", "broadcast-bytes": "", "unbroadcast-bytes": "", "target-partition-bytes": "",
		"skew-factor": "", "skew-min-bytes": "", "get-budget": "", "pack-bytes": "", "shuffle-codec": "",
		"defer-probe-ratio": "", "runtime-filters": "", "runtime-filter-wait": "", "max-sql-bytes": "", "lease": "",
		"function-timeout": "", "lambda-timeout": "", "lambda-payload-limit": "",
		"max-attempts": "SLUICE_MAX_ATTEMPTS", "retry-backoff": "", "task-timeout": "SLUICE_TASK_TIMEOUT",
		"task-deadline-floor": "", "task-bytes-per-second": "", "outage-budget": "SLUICE_OUTAGE_BUDGET", "s3-outage": "",
		"hedge-factor": "", "hedge-after": "", "retention": "SLUICE_RETENTION", "record-retention": "SLUICE_RECORD_RETENTION",
		"redis-outage": "", "key-spread": "", "faults": "SLUICE_FAULTS", "pg-startup-timeout": "", "pg-max-conns": "",
	}
	for name, env := range kept {
		found := false
		for _, k := range knobs {
			if k.name == name {
				found = true
				if env != "" && k.env != env {
					t.Errorf("knob %s: env %s, was %s", name, k.env, env)
				}
			}
		}
		if !found {
			t.Errorf("flag --%s is gone from the knob table", name)
		}
	}
}

// commandFlags lists the flags of every command of the app by its path
// ("coordinator serve").
func commandFlags(app *cli.App) map[string][]cli.Flag {
	out := map[string][]cli.Flag{}
	var walk func(path string, cs []*cli.Command)
	walk = func(path string, cs []*cli.Command) {
		for _, c := range cs {
			p := strings.TrimSpace(path + " " + c.Name)
			out[p] = c.Flags
			walk(p, c.Subcommands)
		}
	}
	walk("", app.Commands)
	return out
}

// TestKnobsOnCommands: each command takes exactly the knobs of its scope,
// no command declares a flag name or an env name twice, the embedded
// stack's commands and `coordinator serve` take the same engine knobs,
// and serve's extra ones are the knobs marked serve-only.
func TestKnobsOnCommands(t *testing.T) {
	cmds := commandFlags(newApp())
	for path, flags := range cmds {
		names, envs := map[string]bool{}, map[string]bool{}
		for _, f := range flags {
			for _, n := range f.Names() {
				if names[n] {
					t.Errorf("%s: flag --%s declared twice", path, n)
				}
				names[n] = true
			}
			if e, ok := f.(interface{ GetEnvVars() []string }); ok {
				for _, v := range e.GetEnvVars() {
					if envs[v] {
						t.Errorf("%s: env %s read by two flags", path, v)
					}
					envs[v] = true
				}
			}
		}
	}
	knobsOf := func(path string) []string {
		flags, ok := cmds[path]
		if !ok {
			t.Fatalf("no command %q", path)
		}
		var out []string
		for _, f := range flags {
			for _, k := range knobs {
				if k.name == f.Names()[0] {
					out = append(out, k.name)
				}
			}
		}
		sort.Strings(out)
		return out
	}
	want := func(sc scope) []string {
		var out []string
		for _, k := range knobs {
			if k.scope&sc != 0 {
				out = append(out, k.name)
			}
		}
		sort.Strings(out)
		return out
	}
	for path, sc := range map[string]scope{
		"local query":       onLocal | onQuery,
		"local demo":        onLocal,
		"local start":       onLocal | onFrontEnds,
		"sql":               onLocal | onQuery,
		"submit":            onQuery,
		"coordinator serve": onServe | onFrontEnds,
		"sim":               onLocal | onSim,
	} {
		if got, w := knobsOf(path), want(sc); !slices.Equal(got, w) {
			t.Errorf("%s takes knobs %v, want %v", path, got, w)
		}
	}
	// local start and serve: the same knobs, but for those of the service
	// alone (its lease, invokers and failure handling).
	start, serve := knobsOf("local start"), knobsOf("coordinator serve")
	for _, n := range start {
		if !slices.Contains(serve, n) {
			t.Errorf("--%s: on local start, not on coordinator serve", n)
		}
	}
	for _, n := range serve {
		if k := knobNamed(n); !slices.Contains(start, n) && k.scope&onLocal != 0 {
			t.Errorf("--%s: an engine knob missing from local start", n)
		}
	}
}

// TestKnobsApply: every knob's env variable and flag reach its field, and
// a knob left alone keeps its default.
func TestKnobsApply(t *testing.T) {
	for _, k := range knobs {
		t.Run(k.name, func(t *testing.T) {
			def := defaultSettings()
			var text string
			var want any
			switch p := k.field(&def).(type) {
			case *int:
				text, want = fmt.Sprint(*p+3), *p+3
			case *int64:
				text, want = fmt.Sprint(*p+(1<<20)), *p+(1<<20)
			case *float64:
				text, want = fmt.Sprint(*p+0.5), *p+0.5
			case *bool:
				text, want = fmt.Sprint(!*p), !*p
			case *string:
				text, want = "zstd", "zstd"
			case *time.Duration:
				text, want = (*p + time.Second).String(), *p+time.Second
			default:
				t.Fatalf("field of type %T", p)
			}
			run := func(args ...string) settings {
				got := defaultSettings()
				app := &cli.App{Flags: []cli.Flag{k.flag(false)}, Action: func(c *cli.Context) error {
					k.apply(c, &got)
					return nil
				}}
				if err := app.Run(append([]string{"sluice"}, args...)); err != nil {
					t.Fatal(err)
				}
				return got
			}
			unset := run()
			if v, d := reflect.ValueOf(k.field(&unset)).Elem().Interface(), reflect.ValueOf(k.field(&def)).Elem().Interface(); v != d {
				t.Errorf("unset: field %v, want the default %v", v, d)
			}
			byFlag := run("--" + k.name + "=" + text) // a bool flag takes its value after =
			if v := reflect.ValueOf(k.field(&byFlag)).Elem().Interface(); v != want {
				t.Errorf("--%s %s: field %v, want %v", k.name, text, v, want)
			}
			t.Setenv(k.env, text)
			byEnv := run()
			if v := reflect.ValueOf(k.field(&byEnv)).Elem().Interface(); v != want {
				t.Errorf("%s=%s: field %v, want %v", k.env, text, v, want)
			}
		})
	}
}

// TestKnobsJobSettings: the settings a job records (shown on its web UI
// page) are named by knobs, and each shows its knob's default value in a
// job run with the defaults.
func TestKnobsJobSettings(t *testing.T) {
	byName := map[string]knob{}
	for _, k := range knobs {
		byName[k.name] = k
	}
	def := defaultSettings()
	for _, s := range coordinator.JobSettings(def.Config, def.Config.Adaptive) {
		k, ok := byName[s.Name]
		if !ok {
			t.Errorf("job setting %q is no knob", s.Name)
			continue
		}
		v := reflect.ValueOf(k.field(&def)).Elem().Interface()
		want := fmt.Sprint(v)
		if b, ok := v.(bool); ok {
			want = fmt.Sprint(b)
		}
		if s.Name == "functions" {
			continue // the coordinator records its concurrency; the knob's default 0 means one per core
		}
		if s.Value != want {
			t.Errorf("job setting %s = %q, the knob's default is %q", s.Name, s.Value, want)
		}
	}
}
