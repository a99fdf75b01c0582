package catalog

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sluicedb/sluice/planner/plan"
)

// CSVOptionNames are the options a CSV table takes, in CREATE EXTERNAL
// TABLE ... OPTIONS (...) and as named arguments of read_csv, with
// DuckDB's read_csv names and meanings (ParseCSVOptions).
var CSVOptionNames = []string{
	"all_varchar", "allow_quoted_nulls", "column_types", "columns", "compression", "dateformat", "delim", "delimiter",
	"dtypes", "escape", "header", "hive_partitioning", "ignore_errors", "null", "null_padding",
	"nullstr", "quote", "sep", "skip", "timestampformat", "types",
}

// badOption is a CSV option's error (CodeBadOption).
func badOption(format string, args ...any) error {
	return plan.Errorf(plan.CodeBadOption, format, args...)
}

// ParseCSVOptions reads CSV options (names lower-case, values as text:
// 'true', '|', '%d/%m/%Y') over the defaults: a header line, ',' between
// fields, '"' quotes escaped by doubling, empty fields and "" NULL. An
// unknown option is an error listing the known ones.
func ParseCSVOptions(opts map[string]string) (CSVOptions, error) {
	o := CSVOptions{Header: true, Delimiter: ','}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := opts[k]
		var err error
		switch k {
		case "header":
			o.Header, err = optBool(k, v)
		case "delim", "delimiter", "sep":
			if v == `\t` {
				v = "\t"
			}
			o.Delimiter, err = optChar(k, v)
			if err == nil && (o.Delimiter == '\n' || o.Delimiter == '\r') {
				err = badOption("CSV option %s %q: not a line break", k, v)
			}
		case "quote":
			o.Quote, err = optChar(k, v)
		case "escape":
			o.Escape, err = optChar(k, v)
		case "nullstr", "null":
			o.Null = v
		case "allow_quoted_nulls":
			var allow bool
			allow, err = optBool(k, v)
			o.QuotedNotNull = !allow
		case "all_varchar":
			o.AllVarchar, err = optBool(k, v)
		case "null_padding":
			o.NullPadding, err = optBool(k, v)
		case "ignore_errors":
			o.IgnoreErrors, err = optBool(k, v)
		case "hive_partitioning":
			var on bool
			on, err = optBool(k, v)
			o.NoHivePartitions = !on
		case "skip":
			o.Skip, err = strconv.Atoi(v)
			if err != nil || o.Skip < 0 {
				err = badOption("CSV option skip %q: want a number of lines, 0 or more", v)
			}
		case "compression":
			switch strings.ToLower(v) {
			case "auto", "gzip", "zstd", "none":
				o.Compression = strings.ToLower(v)
			default:
				err = badOption("CSV option compression %q: want auto, gzip, zstd or none", v)
			}
		case "types", "column_types", "dtypes":
			var fs []plan.Field
			if fs, err = structOption(k, v); err == nil {
				o.Types = fs
			}
		case "columns":
			o.Schema, err = structOption(k, v)
		case "dateformat":
			o.DateFormat, err = dateFormat(v)
		case "timestampformat":
			if !isoTimestampFormat.MatchString(v) {
				err = badOption("CSV option timestampformat %q: only ISO timestamps (%%Y-%%m-%%d %%H:%%M:%%S, with T or fractions) are read yet", v)
			}
		default:
			err = badOption("unknown CSV option %q (known: %s)", k, strings.Join(CSVOptionNames, ", "))
		}
		if err != nil {
			return CSVOptions{}, err
		}
	}
	if o.Quote != 0 && o.Quote == o.Delimiter {
		return CSVOptions{}, badOption("CSV options: the quote and the delimiter are both %q", o.Quote)
	}
	return o, nil
}

// structOption parses DuckDB's struct literal of column names and types,
// {'a': 'VARCHAR', 'b': 'DATE'} (keys as written, types as a column
// list's).
func structOption(k, v string) ([]plan.Field, error) {
	bad := func(why string) error {
		return badOption("CSV option %s %s: %s (want {'name': 'TYPE', ...})", k, v, why)
	}
	s := strings.TrimSpace(v)
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		return nil, bad("not a struct")
	}
	s = s[1 : len(s)-1]
	var out []plan.Field
	for len(strings.TrimSpace(s)) > 0 {
		var key, typ string
		var ok bool
		if key, s, ok = cutQuoted(strings.TrimSpace(s)); !ok {
			return nil, bad("a name is not a quoted string")
		}
		if s = strings.TrimSpace(s); !strings.HasPrefix(s, ":") {
			return nil, bad("no ':' after " + key)
		}
		if typ, s, ok = cutQuoted(strings.TrimSpace(s[1:])); !ok {
			return nil, bad("the type of " + key + " is not a quoted string")
		}
		var t plan.DataType
		var err error
		if nestedTypeText(typ) {
			t, err = parseNestedType(typ)
		} else {
			t, err = parseType(strings.ToLower(strings.ReplaceAll(typ, " ", "")))
		}
		if err != nil {
			return nil, bad(key + ": " + err.Error())
		}
		out = append(out, plan.Field{Name: key, Type: t, Nullable: true})
		if s = strings.TrimSpace(s); strings.HasPrefix(s, ",") {
			s = s[1:]
		} else if s != "" {
			return nil, bad("no ',' after " + key)
		}
	}
	if len(out) == 0 {
		return nil, bad("empty")
	}
	return out, nil
}

// cutQuoted cuts a leading 'quoted' string (” is a quote inside).
func cutQuoted(s string) (string, string, bool) {
	if !strings.HasPrefix(s, "'") {
		return "", s, false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '\'' {
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String(), s[i+1:], true
		}
		b.WriteByte(s[i])
	}
	return "", s, false
}

func optBool(k, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true", "yes", "1", "on", "t":
		return true, nil
	case "false", "no", "0", "off", "f":
		return false, nil
	}
	return false, badOption("CSV option %s %q: want true or false", k, v)
}

func optChar(k, v string) (rune, error) {
	if utf8.RuneCountInString(v) != 1 || v[0] >= utf8.RuneSelf {
		return 0, badOption("CSV option %s %q: want one ASCII character", k, v)
	}
	return rune(v[0]), nil
}

var (
	dmyFormatRE        = regexp.MustCompile(`^%([dm])([/.-])%([dm])([/.-])%Y$`)
	isoTimestampFormat = regexp.MustCompile(`^%Y-%m-%d([ T]%H:%M(:%S(\.?%f)?)?)?$`)
)

// dateFormat checks a dateformat option: the ISO form or day, month and
// year with '/', '-' or '.' between them, the forms the reader parses.
func dateFormat(v string) (string, error) {
	if v == "%Y-%m-%d" {
		return "", nil
	}
	if m := dmyFormatRE.FindStringSubmatch(v); m != nil && m[1] != m[3] && m[2] == m[4] {
		return v, nil
	}
	return "", badOption("CSV option dateformat %q: the reader takes %%Y-%%m-%%d, %%d/%%m/%%Y or %%m/%%d/%%Y (with '/', '-' or '.')", v)
}

// csvFormat is the plan's CSV dialect of the options.
func (o CSVOptions) csvFormat() *plan.CSVFormat {
	f := &plan.CSVFormat{Header: o.Header, Delimiter: string(o.Delimiter), Null: o.Null, QuotedNotNull: o.QuotedNotNull,
		Skip: o.Skip, NullPadding: o.NullPadding, IgnoreErrors: o.IgnoreErrors}
	if o.Quote != 0 && o.Quote != '"' {
		f.Quote = string(o.Quote)
	}
	if o.Escape != 0 && o.Escape != o.quote() {
		f.Escape = string(o.Escape)
	}
	return f
}

func (o CSVOptions) quote() rune {
	if o.Quote == 0 {
		return '"'
	}
	return o.Quote
}

// String renders the options that differ from the defaults, for errors.
func (o CSVOptions) String() string { return fmt.Sprintf("%+v", o.csvFormat()) }
