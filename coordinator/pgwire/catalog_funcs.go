package pgwire

import (
	"sort"
	"strconv"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/planner/plan"
)

// processStart is what pg_postmaster_start_time() reports.
var processStart = time.Now()

// setReturning are functions that return rows: in FROM they are
// evaluated (rangeFunction); in a select list they are refused.
var setReturning = map[string]bool{
	"unnest": true, "generate_series": true, "generate_subscripts": true, "_pg_expandarray": true,
	"pg_get_keywords": true, "json_each": true, "jsonb_each": true, "regexp_matches": true,
}

// call evaluates a function call: a window function's hidden column, an
// aggregate over the scope's group, or a scalar function.
func (ev *evaluator) call(fc *pg_query.FuncCall, sc *scope) (any, error) {
	name := funcName(fc)
	if fc.Over != nil {
		if i, ok := ev.winCol[fc]; ok && i < len(sc.row) {
			return sc.row[i], nil
		}
		return nil, unsupported("window function %s() here", name)
	}
	if aggregates[name] {
		return ev.aggregate(fc, sc)
	}
	if setReturning[name] {
		return nil, unsupported("set-returning function %s() in an expression (call it in FROM)", name)
	}
	if fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || len(fc.AggOrder) > 0 || fc.FuncVariadic {
		return nil, unsupported("%s(*), DISTINCT, FILTER, ORDER BY or VARIADIC in a call of %s()", name, name)
	}
	args := make([]any, len(fc.Args))
	for i, a := range fc.Args {
		v, err := ev.eval(a, sc)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	arg := func(i int) any {
		if i < len(args) {
			return args[i]
		}
		return nil
	}
	str := func(i int) (string, bool) {
		v := arg(i)
		if v == nil {
			return "", false
		}
		return text(v), true
	}
	integer := func(i int) (int64, bool) { return toInt(arg(i)) }
	strict := func() bool { // a NULL argument: a NULL answer
		for _, a := range args {
			if a == nil {
				return true
			}
		}
		return false
	}
	c := ev.m.c
	switch name {
	case "version":
		v := c.s.Version
		if v == "" {
			v = "dev"
		}
		return "PostgreSQL " + serverVersion + " (sluice " + v + ")", nil
	case "current_database":
		return c.db, nil
	case "current_schema":
		return "public", nil
	case "current_user", "session_user", "user":
		return c.user, nil
	case "current_schemas":
		if arg(0) == true {
			return []any{"pg_catalog", "public"}, nil
		}
		return []any{"public"}, nil
	case "current_setting":
		s, ok := str(0)
		if !ok {
			return nil, nil
		}
		if v, found := c.settings[lower(s)]; found || c.setting(s) != "" {
			if !found {
				v = c.setting(s)
			}
			return v, nil
		}
		if arg(1) == true {
			return nil, nil
		}
		return nil, &paramError{state: "42704", msg: "unrecognized configuration parameter \"" + s + "\""}
	case "set_config":
		s, ok := str(0)
		if !ok {
			return nil, plan.Errorf(plan.CodeValue, "set_config: the setting name must not be NULL")
		}
		v, _ := str(1)
		c.settings[lower(s)] = v
		return v, nil
	case "pg_backend_pid":
		return int64(c.pid), nil
	case "pg_is_in_recovery", "pg_jit_available", "pg_is_other_temp_schema":
		return false, nil
	case "pg_my_temp_schema":
		return int64(0), nil
	case "pg_get_userbyid":
		if strict() {
			return nil, nil
		}
		if oid, _ := integer(0); oid == 10 {
			return c.user, nil
		}
		oid, _ := integer(0)
		return "unknown (OID=" + strconv.FormatInt(oid, 10) + ")", nil
	case "pg_table_is_visible", "pg_type_is_visible", "pg_function_is_visible", "pg_collation_is_visible",
		"has_table_privilege", "has_schema_privilege", "has_database_privilege", "has_column_privilege",
		"has_any_column_privilege", "has_function_privilege", "has_sequence_privilege":
		if strict() {
			return nil, nil
		}
		return true, nil
	case "format_type":
		oid, ok := integer(0)
		if !ok {
			return nil, nil
		}
		mod, ok := integer(1)
		if !ok {
			mod = -1
		}
		return formatType(oid, mod), nil
	case "obj_description", "col_description", "shobj_description", "pg_get_serial_sequence", "pg_get_partkeydef",
		"pg_get_partition_constraintdef", "pg_tablespace_location", "inet_server_addr", "inet_client_addr",
		"inet_server_port", "inet_client_port":
		// sluice has no comments, sequences, partitions or tablespaces.
		return nil, nil
	case "pg_get_expr", "pg_get_constraintdef", "pg_get_indexdef", "pg_get_triggerdef", "pg_get_viewdef",
		"pg_get_ruledef", "pg_get_functiondef", "pg_get_function_arguments", "pg_get_function_result",
		"pg_get_function_identity_arguments", "pg_get_statisticsobjdef", "pg_get_statisticsobjdef_columns":
		// Their objects live in relations that are empty here: only a
		// NULL argument can reach them.
		if arg(0) == nil {
			return nil, nil
		}
		return nil, unsupported("%s() of an object sluice does not have", name)
	case "pg_encoding_to_char":
		if e, ok := integer(0); ok && e == 0 {
			return "SQL_ASCII", nil
		}
		return "UTF8", nil
	case "pg_client_encoding", "getdatabaseencoding":
		return "UTF8", nil
	case "pg_relation_size", "pg_total_relation_size", "pg_table_size":
		oid, ok := integer(0)
		if !ok {
			return nil, nil
		}
		if oid >= firstOID && int(oid-firstOID) < len(ev.m.tables) {
			return ev.m.tables[oid-firstOID].Bytes, nil
		}
		return int64(0), nil
	case "pg_indexes_size":
		return int64(0), nil
	case "pg_size_pretty":
		if b, ok := integer(0); ok {
			return sizePretty(b), nil
		}
		return nil, nil
	case "txid_current", "pg_current_xact_id":
		return int64(1), nil
	case "now", "statement_timestamp", "transaction_timestamp", "clock_timestamp":
		return ev.now.Format("2006-01-02 15:04:05.999999+00"), nil
	case "pg_postmaster_start_time", "pg_conf_load_time":
		return processStart.UTC().Format("2006-01-02 15:04:05.999999+00"), nil
	case "to_regclass", "to_regtype", "to_regnamespace", "to_regrole":
		if strict() {
			return nil, nil
		}
		r, err := ev.m.reg(strings.TrimPrefix(name, "to_"), arg(0))
		if err != nil && plan.CodeOf(err) == plan.CodeUnknownTbl {
			return nil, nil
		}
		return r, err
	case "array_to_string":
		if arg(0) == nil || arg(1) == nil {
			return nil, nil
		}
		arr, ok := arg(0).([]any)
		if !ok {
			return nil, unsupported("array_to_string of a %T", arg(0))
		}
		sep, _ := str(1)
		var parts []string
		for _, v := range arr {
			if v == nil {
				if s, ok := str(2); ok {
					parts = append(parts, s)
				}
				continue
			}
			parts = append(parts, text(v))
		}
		return strings.Join(parts, sep), nil
	case "array_length", "array_upper", "cardinality":
		if arg(0) == nil {
			return nil, nil
		}
		arr, ok := arg(0).([]any)
		if !ok {
			return nil, unsupported("%s of a %T", name, arg(0))
		}
		if d, ok := integer(1); name != "cardinality" && (!ok || d != 1) {
			return nil, nil
		}
		if len(arr) == 0 && name != "cardinality" {
			return nil, nil
		}
		return int64(len(arr)), nil
	case "array_lower":
		arr, ok := arg(0).([]any)
		if !ok || len(arr) == 0 {
			return nil, nil
		}
		return int64(1), nil
	case "lower", "upper", "length", "char_length", "character_length", "octet_length", "quote_ident",
		"quote_literal", "btrim", "ltrim", "rtrim", "md5", "initcap", "reverse":
		s, ok := str(0)
		if !ok {
			return nil, nil
		}
		return stringFunc(name, s, args)
	case "quote_nullable":
		if s, ok := str(0); ok {
			return "'" + strings.ReplaceAll(s, "'", "''") + "'", nil
		}
		return "NULL", nil
	case "substring", "substr":
		if strict() {
			return nil, nil
		}
		s, _ := str(0)
		from, ok := integer(1)
		if !ok {
			return nil, unsupported("%s with a pattern", name)
		}
		rs := []rune(s)
		start := from - 1
		end := int64(len(rs))
		if n, ok := integer(2); ok && len(args) > 2 {
			if n < 0 {
				return nil, plan.Errorf(plan.CodeValue, "negative substring length not allowed")
			}
			end = min(end, start+n)
		}
		start = max(start, 0)
		if start >= end {
			return "", nil
		}
		return string(rs[start:end]), nil
	case "left", "right":
		if strict() {
			return nil, nil
		}
		s, _ := str(0)
		n, _ := integer(1)
		rs := []rune(s)
		k := int(n)
		if k < 0 {
			k = max(len(rs)+k, 0)
		}
		k = min(k, len(rs))
		if name == "left" {
			return string(rs[:k]), nil
		}
		return string(rs[len(rs)-k:]), nil
	case "replace":
		if strict() {
			return nil, nil
		}
		s, _ := str(0)
		from, _ := str(1)
		to, _ := str(2)
		if from == "" {
			return s, nil
		}
		return strings.ReplaceAll(s, from, to), nil
	case "strpos", "position":
		if strict() {
			return nil, nil
		}
		s, _ := str(0)
		sub, _ := str(1)
		i := strings.Index(s, sub)
		if i < 0 {
			return int64(0), nil
		}
		return int64(len([]rune(s[:i])) + 1), nil
	case "starts_with":
		if strict() {
			return nil, nil
		}
		s, _ := str(0)
		p, _ := str(1)
		return strings.HasPrefix(s, p), nil
	case "split_part":
		if strict() {
			return nil, nil
		}
		s, _ := str(0)
		sep, _ := str(1)
		n, _ := integer(2)
		parts := strings.Split(s, sep)
		if n < 0 {
			n = int64(len(parts)) + n + 1
		}
		if n < 1 || int(n) > len(parts) {
			return "", nil
		}
		return parts[n-1], nil
	case "concat":
		var b strings.Builder
		for _, a := range args {
			b.WriteString(text(a))
		}
		return b.String(), nil
	case "concat_ws":
		sep, ok := str(0)
		if !ok {
			return nil, nil
		}
		var parts []string
		for _, a := range args[1:] {
			if a != nil {
				parts = append(parts, text(a))
			}
		}
		return strings.Join(parts, sep), nil
	}
	return nil, unsupported("function %s()", name)
}

func stringFunc(name, s string, args []any) (any, error) {
	switch name {
	case "lower":
		return strings.ToLower(s), nil
	case "upper":
		return strings.ToUpper(s), nil
	case "length", "char_length", "character_length":
		return int64(len([]rune(s))), nil
	case "octet_length":
		return int64(len(s)), nil
	case "quote_ident":
		return quoteIdent(s), nil
	case "quote_literal":
		return "'" + strings.ReplaceAll(s, "'", "''") + "'", nil
	case "btrim", "ltrim", "rtrim":
		chars := " "
		if len(args) > 1 {
			if args[1] == nil {
				return nil, nil
			}
			chars = text(args[1])
		}
		switch name {
		case "btrim":
			return strings.Trim(s, chars), nil
		case "ltrim":
			return strings.TrimLeft(s, chars), nil
		}
		return strings.TrimRight(s, chars), nil
	case "reverse":
		rs := []rune(s)
		for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
			rs[i], rs[j] = rs[j], rs[i]
		}
		return string(rs), nil
	}
	return nil, unsupported("function %s()", name)
}

// quoteIdent quotes an identifier when Postgres would: unless it is
// lower-case letters, digits and underscores not starting with a digit,
// and not a reserved keyword.
func quoteIdent(s string) string {
	safe := s != ""
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || (i > 0 && (r >= '0' && r <= '9' || r == '$'))) {
			safe = false
			break
		}
	}
	if safe {
		for _, k := range keywords {
			if k.word == s && k.catcode != 'U' {
				safe = false
				break
			}
		}
	}
	if safe {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// aggregate evaluates an aggregate over the rows of the scope's group.
func (ev *evaluator) aggregate(fc *pg_query.FuncCall, sc *scope) (any, error) {
	name := funcName(fc)
	if sc.group == nil {
		return nil, plan.Errorf(plan.CodeGrouping, "aggregate function %s() is not allowed here", name)
	}
	type item struct {
		vals []any
		keys []any
	}
	var items []item
	sorts := make([]*pg_query.SortBy, len(fc.AggOrder))
	for i, o := range fc.AggOrder {
		sorts[i] = o.GetSortBy()
	}
	for _, row := range sc.group {
		rs := &scope{rel: sc.rel, row: row, parent: sc.parent}
		if fc.AggFilter != nil {
			v, err := ev.eval(fc.AggFilter, rs)
			if err != nil {
				return nil, err
			}
			if v != true {
				continue
			}
		}
		var it item
		for _, a := range fc.Args {
			v, err := ev.eval(a, rs)
			if err != nil {
				return nil, err
			}
			it.vals = append(it.vals, v)
		}
		for _, s := range sorts {
			v, err := ev.eval(s.Node, rs)
			if err != nil {
				return nil, err
			}
			it.keys = append(it.keys, v)
		}
		items = append(items, it)
	}
	if len(sorts) > 0 {
		sort.SliceStable(items, func(a, b int) bool { return compareKeys(items[a].keys, items[b].keys, sorts) < 0 })
	}
	if fc.AggStar {
		if name != "count" {
			return nil, plan.Errorf(plan.CodeSyntax, "%s(*) is not an aggregate", name)
		}
		return int64(len(items)), nil
	}
	if len(fc.Args) == 0 {
		return nil, plan.Errorf(plan.CodeSyntax, "%s() needs an argument", name)
	}
	// The first argument's non-NULL values (array_agg keeps NULLs).
	var vals []any
	seen := map[string]bool{}
	for _, it := range items {
		v := it.vals[0]
		if v == nil && name != "array_agg" {
			continue
		}
		if fc.AggDistinct {
			k := keyText(v)
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		vals = append(vals, v)
	}
	switch name {
	case "count":
		return int64(len(vals)), nil
	case "array_agg":
		if len(vals) == 0 {
			return nil, nil
		}
		return vals, nil
	case "string_agg":
		if len(vals) == 0 {
			return nil, nil
		}
		var b strings.Builder
		n := 0
		for _, it := range items {
			if it.vals[0] == nil {
				continue
			}
			if n > 0 && len(it.vals) > 1 && it.vals[1] != nil {
				b.WriteString(text(it.vals[1]))
			}
			b.WriteString(text(it.vals[0]))
			n++
		}
		if fc.AggDistinct {
			var parts []string
			for _, v := range vals {
				parts = append(parts, text(v))
			}
			sep := ""
			if len(items) > 0 && len(items[0].vals) > 1 {
				sep = text(items[0].vals[1])
			}
			return strings.Join(parts, sep), nil
		}
		return b.String(), nil
	case "min", "max":
		var best any
		for _, v := range vals {
			if best == nil || (name == "min" && compare(v, best) < 0) || (name == "max" && compare(v, best) > 0) {
				best = v
			}
		}
		return best, nil
	case "sum", "avg":
		if len(vals) == 0 {
			return nil, nil
		}
		var si int64
		var sf float64
		ints := true
		for _, v := range vals {
			if i, ok := v.(int64); ok && ints {
				si += i
				sf += float64(i)
				continue
			}
			f, ok := numFloat(v)
			if !ok {
				return nil, unsupported("%s of a %T", name, v)
			}
			ints = false
			sf += f
		}
		if name == "avg" {
			return sf / float64(len(vals)), nil
		}
		if ints {
			return si, nil
		}
		return sf, nil
	case "bool_and", "every", "bool_or":
		if len(vals) == 0 {
			return nil, nil
		}
		out := name != "bool_or"
		for _, v := range vals {
			b, ok := v.(bool)
			if !ok {
				return nil, unsupported("%s of a %T", name, v)
			}
			if name == "bool_or" {
				out = out || b
			} else {
				out = out && b
			}
		}
		return out, nil
	}
	return nil, unsupported("aggregate %s()", name)
}
