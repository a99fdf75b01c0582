package main

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// normalizeArgs makes flags work before or after positionals in every
// command, once for the whole app: urfave/cli/v2 stops parsing a command's
// flags at its first positional argument, so `sluice tables add people
// s3://b/p/ --format csv` would treat `--format csv` as positionals.
//
// It walks the command path (global flags, then command and subcommand
// names), then splits the leaf command's remaining arguments into its flags
// (with their values) and positionals, and rebuilds the line as
// `path... flags... -- positionals...`. A literal `--` ends the flags: all
// that follows is positional. A token that looks like a flag but names none
// of the command's flags stays positional, so SQL text that begins with a
// `--` comment is never read as a flag. A token written as a flag name
// (-name or --name[=value], the name a plain word) that is none of the
// command's flags is an *unknownFlagError naming the nearest flag: a typo
// such as --fromat is never taken as SQL or as a table name.
func normalizeArgs(app *cli.App, args []string) ([]string, error) {
	if len(args) == 0 {
		return args, nil
	}
	out := []string{args[0]}
	cmds := app.Commands
	flags := app.Flags
	i := 1
	var leaf *cli.Command
	// Descend the command path; flags of the app or of intermediate
	// commands stay where they are.
	for i < len(args) {
		a := args[i]
		if a == "--" {
			break
		}
		if f, inline, ok := lookupFlag(flags, a); ok {
			out = append(out, a)
			i++
			if takesValue(f) && !inline && i < len(args) {
				out = append(out, args[i])
				i++
			}
			continue
		}
		c := findCommand(cmds, a)
		if c == nil {
			if looksLikeFlag(a) {
				return nil, unknownFlag(a, commandPath(out), flags)
			}
			break
		}
		out = append(out, a)
		i++
		leaf = c
		cmds = c.Subcommands
		flags = c.Flags
		if len(cmds) == 0 {
			break
		}
	}
	if leaf == nil {
		return append(out, args[i:]...), nil
	}
	var fl, pos []string
	for i < len(args) {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if f, inline, ok := lookupFlag(flags, a); ok {
			fl = append(fl, a)
			i++
			if takesValue(f) && !inline && i < len(args) {
				fl = append(fl, args[i])
				i++
			}
			continue
		}
		if looksLikeFlag(a) {
			return nil, unknownFlag(a, commandPath(out), flags)
		}
		pos = append(pos, a)
		i++
	}
	out = append(out, fl...)
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out, nil
}

// flagName matches what is written as a flag: -name or --name[=value],
// the name a plain word. "-1", "-- a comment" and "--\nselect" are not.
var flagName = regexp.MustCompile(`^--?([a-zA-Z][a-zA-Z0-9-]*)(=.*)?$`)

func looksLikeFlag(a string) bool { return flagName.MatchString(a) }

// unknownFlagError is a flag the command does not have.
type unknownFlagError struct {
	Flag, Command, Suggest string
}

func (e *unknownFlagError) Error() string {
	msg := fmt.Sprintf("unknown flag %s for '%s'", e.Flag, e.Command)
	if e.Suggest != "" {
		msg += fmt.Sprintf(" (did you mean --%s?)", e.Suggest)
	}
	return msg + "; run '" + e.Command + " --help' for its flags (a positional argument that starts with - goes after --)"
}

func unknownFlag(a, command string, flags []cli.Flag) error {
	m := flagName.FindStringSubmatch(a)
	name := m[1]
	best, bestD := "", 3 // suggest within an edit distance of 2
	for _, f := range flags {
		for _, n := range f.Names() {
			d := editDistance(name, n)
			if strings.HasPrefix(n, name) && len(name) >= 3 {
				d = min(d, 1)
			}
			if d < bestD {
				best, bestD = n, d
			}
		}
	}
	return &unknownFlagError{Flag: "--" + name, Command: command, Suggest: best}
}

// commandPath is the command words of a normalized prefix ("sluice submit").
func commandPath(out []string) string {
	var words []string
	skipValue := false
	for i, w := range out {
		if skipValue {
			skipValue = false
			continue
		}
		if i > 0 && strings.HasPrefix(w, "-") {
			skipValue = !strings.Contains(w, "=")
			continue
		}
		words = append(words, w)
	}
	if len(words) > 0 {
		words[0] = "sluice"
	}
	return strings.Join(words, " ")
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// lookupFlag reports whether a is one of flags (or -h/--help), written as
// -name, --name or --name=value (inline is true for the last form).
func lookupFlag(flags []cli.Flag, a string) (cli.Flag, bool, bool) {
	if len(a) < 2 || a[0] != '-' {
		return nil, false, false
	}
	name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	inline := false
	if j := strings.IndexByte(name, '='); j >= 0 {
		name, inline = name[:j], true
	}
	if name == "" || strings.ContainsAny(name, " \t\n") {
		return nil, false, false
	}
	if name == "help" || name == "h" {
		return cli.HelpFlag, inline, true
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f, inline, true
			}
		}
	}
	for _, n := range cli.VersionFlag.Names() {
		if n == name {
			return cli.VersionFlag, inline, true
		}
	}
	return nil, false, false
}

func takesValue(f cli.Flag) bool {
	if d, ok := f.(cli.DocGenerationFlag); ok {
		return d.TakesValue()
	}
	return false
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

// ByteSize is a flag value in bytes that accepts units: 8MiB, 1GiB, 64MB
// (decimal), 512KiB, or a plain number of bytes; -1 is kept for settings
// where it means "never".
type ByteSize int64

// Set parses s (see parseByteSize).
func (b *ByteSize) Set(s string) error {
	if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
		*b = ByteSize(n)
		return nil
	}
	n, err := parseByteSize(s)
	if err != nil {
		return err
	}
	*b = ByteSize(n)
	return nil
}

func (b *ByteSize) String() string {
	if b == nil {
		return "0"
	}
	return formatByteSize(int64(*b))
}

// bytesFlag is a flag holding a ByteSize.
func bytesFlag(name string, def int64, usage string, env ...string) *cli.GenericFlag {
	v := ByteSize(def)
	return &cli.GenericFlag{Name: name, Value: &v, Usage: usage + " (units allowed: 8MiB, 1GiB)", EnvVars: env}
}

// bytesValue reads a flag made by bytesFlag.
func bytesValue(c *cli.Context, name string) int64 {
	if g, ok := c.Generic(name).(*ByteSize); ok && g != nil {
		return int64(*g)
	}
	return 0
}

// version is the build's module version and VCS revision.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		return fmt.Sprintf("%s (%s%s, %s)", v, rev, dirty, bi.GoVersion)
	}
	return fmt.Sprintf("%s (%s)", v, bi.GoVersion)
}
