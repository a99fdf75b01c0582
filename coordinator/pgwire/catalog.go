package pgwire

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/planner/sqlparse"
)

// The statements clients send around their queries are answered here,
// never sent to the engine:
//
//   - SET / RESET / SHOW, kept per connection;
//   - BEGIN / COMMIT / ROLLBACK / DISCARD / DEALLOCATE (sluice is read-only:
//     each is acknowledged and does nothing);
//   - SELECTs that read pg_catalog or information_schema relations, or call
//     the session functions clients probe (version(), current_database(),
//     current_setting(), ...).
//
// A catalog SELECT is evaluated over a small emulation of the catalog: the
// first relation of its FROM clause yields rows (pg_class and pg_attribute
// from the sluice catalog, pg_namespace, pg_database, pg_type, pg_tables,
// pg_settings, information_schema.tables, .columns, .schemata; every other
// catalog relation is empty). Columns of relations joined to it resolve by
// name against its row; WHERE conjuncts made of =, <>, <, >, ~, !~, IN, IS
// NULL, NOT, AND and OR over those columns filter the rows, and a conjunct
// that cannot be evaluated (a function the emulation does not know) is
// taken as true. An inner join with an empty catalog relation is empty.
// This covers what psql's \d, \dt, \d TABLE, \dn and \l send and the
// probes of pgx, JDBC and DBeaver on connect; docs/pgwire.md lists it.

// answer handles sql when it is a session or catalog statement. ok false:
// it is the engine's. With describe, SET and friends change nothing.
func (c *conn) answer(ctx context.Context, sql string, describe bool) (res *result, ok bool, err error) {
	tree, perr := sqlparse.Parse(sql) // too deep: the engine's planner says so
	if perr != nil || len(tree.Stmts) != 1 {
		return nil, false, nil
	}
	n := tree.Stmts[0].Stmt
	switch {
	case n.GetVariableSetStmt() != nil:
		s := n.GetVariableSetStmt()
		if !describe {
			c.set(s)
		}
		if s.Kind == pg_query.VariableSetKind_VAR_RESET || s.Kind == pg_query.VariableSetKind_VAR_RESET_ALL {
			return &result{tag: "RESET"}, true, nil
		}
		return &result{tag: "SET"}, true, nil
	case n.GetVariableShowStmt() != nil:
		name := lower(n.GetVariableShowStmt().Name)
		if name == "all" {
			keys := make([]string, 0, len(c.settings))
			for k := range c.settings {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			rows := make([][]any, len(keys))
			for i, k := range keys {
				rows[i] = []any{k, c.settings[k], ""}
			}
			return table([]string{"name", "setting", "description"}, rows), true, nil
		}
		v, found := c.settings[name]
		if !found && c.setting(name) == "" {
			return nil, true, &paramError{state: "42704", msg: fmt.Sprintf("unrecognized configuration parameter %q", name)}
		}
		if !found {
			v = c.setting(name)
		}
		return table([]string{name}, [][]any{{v}}), true, nil
	case n.GetTransactionStmt() != nil:
		tags := map[pg_query.TransactionStmtKind]string{
			pg_query.TransactionStmtKind_TRANS_STMT_BEGIN: "BEGIN", pg_query.TransactionStmtKind_TRANS_STMT_START: "BEGIN",
			pg_query.TransactionStmtKind_TRANS_STMT_COMMIT: "COMMIT", pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK: "ROLLBACK",
		}
		tag := tags[n.GetTransactionStmt().Kind]
		if tag == "" {
			tag = "COMMIT"
		}
		return &result{tag: tag}, true, nil
	case n.GetDiscardStmt() != nil:
		return &result{tag: "DISCARD ALL"}, true, nil
	case n.GetDeallocateStmt() != nil:
		return &result{tag: "DEALLOCATE"}, true, nil
	case n.GetSelectStmt() != nil:
		sel := n.GetSelectStmt()
		for sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Larg != nil {
			sel = sel.Larg
		}
		switch route, err := routeSelect(n); {
		case err != nil:
			return nil, true, err
		case route == routeEngine:
			return nil, false, nil
		}
		res, err := c.selectCatalog(ctx, sel)
		return res, true, err
	}
	return nil, false, nil
}

func (c *conn) set(s *pg_query.VariableSetStmt) {
	name := lower(s.Name)
	switch s.Kind {
	case pg_query.VariableSetKind_VAR_RESET:
		c.settings[name] = defaultSettings()[name]
	case pg_query.VariableSetKind_VAR_RESET_ALL:
		c.settings = defaultSettings()
	case pg_query.VariableSetKind_VAR_SET_DEFAULT:
		c.settings[name] = defaultSettings()[name]
	case pg_query.VariableSetKind_VAR_SET_VALUE:
		var vals []string
		for _, a := range s.Args {
			if v, ok := constValue(a); ok {
				vals = append(vals, fmt.Sprint(v))
			}
		}
		if name == "" {
			return
		}
		c.settings[name] = strings.Join(vals, ", ")
	}
}

// catalogFuncs are the session and catalog functions that make a SELECT
// the emulation's.
var catalogFuncs = map[string]bool{
	"version": true, "current_database": true, "current_schema": true, "current_schemas": true, "current_setting": true,
	"pg_backend_pid": true, "pg_is_in_recovery": true, "pg_get_userbyid": true, "pg_table_is_visible": true,
	"format_type": true, "obj_description": true, "col_description": true, "shobj_description": true,
	"pg_encoding_to_char": true, "has_table_privilege": true, "has_schema_privilege": true, "has_database_privilege": true,
	"pg_get_expr": true, "pg_relation_size": true, "pg_total_relation_size": true, "pg_table_size": true,
	"pg_postmaster_start_time": true, "inet_server_addr": true, "inet_server_port": true, "txid_current": true,
	"pg_get_keywords": true, "set_config": true, "pg_function_is_visible": true, "pg_type_is_visible": true,
}

// route says who answers a SELECT.
type route int

const (
	routeEngine  route = iota // the query engine: it reads user tables, or no relation at all
	routeCatalog              // the catalog emulation: every relation it reads is a catalog relation
)

// routeSelect decides who answers a SELECT from the relations its parse
// tree reads, never from the words in its text (EXTRACT, SUBSTRING ...
// FROM, TRIM, CURRENT_DATE and AT TIME ZONE parse as pg_catalog function
// calls and SQL value functions, and a user query that used them was once
// answered by the emulation with a row of NULLs):
//
//   - every relation is a pg_catalog or information_schema one: the
//     emulation;
//   - user tables and catalog relations together: an SL005 error, since
//     neither side can answer it whole;
//   - no relation at all (SELECT version(), SELECT current_user): the
//     emulation when it calls a session or catalog function the engine
//     does not have, else the engine (SELECT current_date + 1, SELECT
//     extract(year from date '1995-01-01')).
//
// A name bound by a WITH clause is not a relation.
func routeSelect(n *pg_query.Node) (route, error) {
	ctes := map[string]bool{}
	walk(n, func(m *pg_query.Node) {
		if ce := m.GetCommonTableExpr(); ce != nil {
			ctes[lower(ce.Ctename)] = true
		}
	})
	var catalogRels, userRels []string
	sessionCall := false
	walk(n, func(m *pg_query.Node) {
		if rv := m.GetRangeVar(); rv != nil {
			name := lower(rv.Relname)
			switch {
			case rv.Schemaname == "" && ctes[name]:
			case isCatalogRelation(rv):
				catalogRels = append(catalogRels, name)
			default:
				userRels = append(userRels, name)
			}
		}
		if fc := m.GetFuncCall(); fc != nil && catalogFuncs[funcName(fc)] {
			sessionCall = true
		}
		if sv := m.GetSqlvalueFunction(); sv != nil && !engineValueFunc[sv.Op] {
			sessionCall = true
		}
		if tc := m.GetTypeCast(); tc != nil && strings.HasPrefix(typeNameOf(tc.TypeName), "reg") {
			sessionCall = true // 'pg_class'::regclass
		}
	})
	switch {
	case len(catalogRels) > 0 && len(userRels) > 0:
		return routeEngine, plan.Errorf(plan.CodeUnsupported,
			"unsupported: a query that reads both catalog relations (%s) and tables (%s); query them separately",
			catalogRels[0], userRels[0])
	case len(catalogRels) > 0:
		return routeCatalog, nil
	case len(userRels) == 0 && sessionCall:
		return routeCatalog, nil
	}
	return routeEngine, nil
}

// isCatalogRelation reports whether rv names a pg_catalog or
// information_schema relation (an unqualified pg_* name is pg_catalog's,
// as Postgres resolves it through its search path).
func isCatalogRelation(rv *pg_query.RangeVar) bool {
	s := lower(rv.Schemaname)
	return s == "pg_catalog" || s == "information_schema" || (s == "" && strings.HasPrefix(lower(rv.Relname), "pg_"))
}

// engineValueFunc are the SQL value functions the engine evaluates itself.
var engineValueFunc = map[pg_query.SQLValueFunctionOp]bool{
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:        true,
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP:   true,
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N: true,
	pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP:      true,
	pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:    true,
}

// walk calls fn on every node under n (through the protobuf reflection of
// the parse tree).
func walk(n *pg_query.Node, fn func(*pg_query.Node)) {
	if n == nil {
		return
	}
	fn(n)
	var visit func(m protoMsg)
	visit = func(m protoMsg) {
		r := m.ProtoReflect()
		r.Range(func(fd protoField, v protoValue) bool {
			switch {
			case fd.IsList():
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					if x, ok := l.Get(i).Message().Interface().(*pg_query.Node); ok {
						walk(x, fn)
					} else if fd.Message() != nil {
						visit(l.Get(i).Message().Interface())
					}
				}
			case fd.Message() != nil:
				if x, ok := v.Message().Interface().(*pg_query.Node); ok {
					walk(x, fn)
				} else {
					visit(v.Message().Interface())
				}
			}
			return true
		})
	}
	visit(n)
}

// table builds a result of text, integer and boolean columns from rows of
// string, int64, bool or nil (NULL) values; a column's type is that of its
// first non-null value (text when none).
func table(names []string, rows [][]any) *result {
	mem := memory.DefaultAllocator
	fs := make([]arrow.Field, len(names))
	for j, name := range names {
		t := arrow.DataType(arrow.BinaryTypes.String)
		for _, r := range rows {
			switch r[j].(type) {
			case int64:
				t = arrow.PrimitiveTypes.Int64
			case bool:
				t = arrow.FixedWidthTypes.Boolean
			case nil:
				continue
			}
			break
		}
		fs[j] = arrow.Field{Name: name, Type: t, Nullable: true}
	}
	schema := arrow.NewSchema(fs, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for _, r := range rows {
		for j, v := range r {
			switch fb := b.Field(j).(type) {
			case *array.Int64Builder:
				if i, ok := v.(int64); ok {
					fb.Append(i)
				} else if v == nil {
					fb.AppendNull()
				} else if i, err := strconv.ParseInt(fmt.Sprint(v), 10, 64); err == nil {
					fb.Append(i)
				} else {
					fb.AppendNull()
				}
			case *array.BooleanBuilder:
				if x, ok := v.(bool); ok {
					fb.Append(x)
				} else {
					fb.AppendNull()
				}
			case *array.StringBuilder:
				if v == nil {
					fb.AppendNull()
				} else if x, ok := v.(bool); ok {
					fb.Append(map[bool]string{true: "t", false: "f"}[x])
				} else {
					fb.Append(fmt.Sprint(v))
				}
			}
		}
	}
	return &result{schema: schema, recs: []arrow.RecordBatch{b.NewRecordBatch()}}
}

// unknown is the value of an expression the emulation cannot evaluate.
type unknownT struct{}

var unknown = unknownT{}

// env is one row of the emulated catalog: qualified ("c.relname") and
// plain ("relname") column names to values.
type env map[string]any

func (c *conn) selectCatalog(ctx context.Context, sel *pg_query.SelectStmt) (*result, error) {
	cat := &emulation{c: c}
	if err := cat.load(ctx); err != nil {
		return nil, err
	}
	// FROM: the first relation yields rows; the others resolve by name.
	var rels []joined
	for _, f := range sel.FromClause {
		collect(f, false, &rels)
	}
	cat.aliases = map[string]string{}
	for _, r := range rels {
		name := lower(r.rv.Relname)
		cat.aliases[name] = name
		if r.rv.Alias != nil {
			cat.aliases[r.rv.Alias.Aliasname] = name
		}
	}
	rows := []env{{}}
	var cols []string
	if len(rels) > 0 {
		rows, cols = cat.rows(rels[0].rv)
		for _, r := range rels[1:] {
			if !r.outer {
				if other, _ := cat.rows(r.rv); len(other) == 0 {
					rows = nil
				}
			}
		}
	}
	// WHERE.
	var kept []env
	for _, e := range rows {
		if v := cat.eval(sel.WhereClause, e); v != false {
			kept = append(kept, e)
		}
	}
	// Targets.
	var names []string
	type target struct {
		expr *pg_query.Node
		col  string
	}
	var targets []target
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			continue
		}
		if cr := rt.Val.GetColumnRef(); cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			for _, col := range cols {
				names = append(names, col)
				targets = append(targets, target{col: col})
			}
			continue
		}
		names = append(names, targetName(rt))
		targets = append(targets, target{expr: rt.Val})
	}
	// count(*) without GROUP BY: one row over the filtered rows.
	if len(sel.GroupClause) == 0 {
		for _, t := range targets {
			if fc := t.expr.GetFuncCall(); fc != nil && funcName(fc) == "count" {
				row := make([]any, len(targets))
				for j, t := range targets {
					if fc := t.expr.GetFuncCall(); fc != nil && funcName(fc) == "count" {
						row[j] = int64(len(kept))
					}
				}
				return table(names, [][]any{row}), nil
			}
		}
	}
	out := make([][]any, len(kept))
	for i, e := range kept {
		row := make([]any, len(targets))
		for j, t := range targets {
			var v any
			if t.expr == nil {
				v = e[t.col]
			} else {
				v = cat.eval(t.expr, e)
			}
			if v == unknown {
				v = nil
			}
			row[j] = v
		}
		out[i] = row
	}
	// ORDER BY output positions or names; LIMIT.
	if len(sel.SortClause) > 0 {
		keys := make([]func(i int) any, 0, len(sel.SortClause))
		for _, s := range sel.SortClause {
			sb := s.GetSortBy()
			if sb == nil {
				continue
			}
			if v, ok := constValue(sb.Node); ok {
				if p, ok := v.(int64); ok && p >= 1 && int(p) <= len(names) {
					keys = append(keys, func(i int) any { return out[i][p-1] })
				}
				continue
			}
			node := sb.Node
			envs := kept
			keys = append(keys, func(i int) any { return cat.eval(node, envs[i]) })
		}
		idx := make([]int, len(out))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool {
			for _, k := range keys {
				if c := compare(k(idx[a]), k(idx[b])); c != 0 {
					return c < 0
				}
			}
			return false
		})
		sorted := make([][]any, len(out))
		for i, j := range idx {
			sorted[i] = out[j]
		}
		out = sorted
	}
	if sel.LimitCount != nil {
		if v, ok := constValue(sel.LimitCount); ok {
			if n, ok := v.(int64); ok && int(n) < len(out) && n >= 0 {
				out = out[:n]
			}
		}
	}
	return table(names, out), nil
}

type joined struct {
	rv    *pg_query.RangeVar
	outer bool // on the nullable side of an outer join
}

func collect(n *pg_query.Node, outer bool, out *[]joined) {
	switch {
	case n.GetRangeVar() != nil:
		*out = append(*out, joined{rv: n.GetRangeVar(), outer: outer})
	case n.GetJoinExpr() != nil:
		j := n.GetJoinExpr()
		collect(j.Larg, outer || j.Jointype == pg_query.JoinType_JOIN_RIGHT || j.Jointype == pg_query.JoinType_JOIN_FULL, out)
		collect(j.Rarg, outer || j.Jointype == pg_query.JoinType_JOIN_LEFT || j.Jointype == pg_query.JoinType_JOIN_FULL, out)
	}
}

func targetName(rt *pg_query.ResTarget) string {
	if rt.Name != "" {
		return rt.Name
	}
	n := rt.Val
	for n.GetTypeCast() != nil {
		n = n.GetTypeCast().Arg
	}
	switch {
	case n.GetColumnRef() != nil:
		f := n.GetColumnRef().Fields
		return strVal(f[len(f)-1])
	case n.GetFuncCall() != nil:
		return funcName(n.GetFuncCall())
	case n.GetSqlvalueFunction() != nil:
		return strings.ToLower(strings.TrimPrefix(n.GetSqlvalueFunction().Op.String(), "SVFOP_"))
	case n.GetCaseExpr() != nil:
		return "case"
	}
	return "?column?"
}

// emulation is the catalog as one query sees it.
type emulation struct {
	c       *conn
	tables  []coordinator.TableInfo
	aliases map[string]string // FROM alias -> relation name
}

const firstOID = 16384 // oids of user relations start here, as in Postgres

func (m *emulation) load(ctx context.Context) error {
	ts, err := m.c.s.Engine.Tables(ctx)
	if err != nil && err != coordinator.ErrNoTableLister {
		return err
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	m.tables = ts
	return nil
}

// rows generates the rows of a catalog relation, with its column names.
func (m *emulation) rows(rv *pg_query.RangeVar) ([]env, []string) {
	alias := rv.Relname
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	var cols []string
	var rows []env
	add := func(kv ...any) {
		e := env{}
		for i := 0; i+1 < len(kv); i += 2 {
			k := kv[i].(string)
			e[k] = kv[i+1]
			if strings.HasPrefix(k, "_") || strings.Contains(k, ".") {
				continue // hidden, or a column of a related relation (pg_namespace.nspname)
			}
			e[alias+"."+k] = kv[i+1]
			if len(rows) == 0 {
				cols = append(cols, k)
			}
		}
		rows = append(rows, e)
	}
	user, db := m.c.user, m.c.db
	schema := lower(rv.Schemaname)
	switch name := lower(rv.Relname); {
	case schema == "information_schema" && name == "tables":
		for _, t := range m.tables {
			add("table_catalog", db, "table_schema", "public", "table_name", t.Name, "table_type", "BASE TABLE",
				"is_insertable_into", "NO", "is_typed", "NO")
		}
	case schema == "information_schema" && name == "columns":
		for _, t := range m.tables {
			for i, f := range t.Columns {
				pt := typeOf(f.Type.Arrow())
				add("table_catalog", db, "table_schema", "public", "table_name", t.Name, "column_name", f.Name,
					"ordinal_position", int64(i+1), "column_default", nil, "is_nullable", map[bool]string{true: "YES", false: "NO"}[f.Nullable],
					"data_type", dataTypeName(f.Type), "numeric_precision", precision(f.Type), "numeric_scale", scale(f.Type),
					"udt_name", udtName(pt.OID))
			}
		}
	case schema == "information_schema" && name == "schemata":
		for _, s := range []string{"public", "pg_catalog", "information_schema"} {
			add("catalog_name", db, "schema_name", s, "schema_owner", user)
		}
	case name == "pg_class":
		for i, t := range m.tables {
			add("oid", int64(firstOID+i), "relname", t.Name, "relnamespace", int64(2200), "relkind", "r", "relowner", int64(10),
				"reltuples", t.Rows, "relpages", (t.Bytes+8191)/8192, "relhasindex", false, "relhasrules", false,
				"relhastriggers", false, "relrowsecurity", false, "relforcerowsecurity", false, "relispartition", false,
				"relchecks", int64(0), "reltablespace", int64(0), "reloftype", int64(0), "relpersistence", "p",
				"relreplident", "d", "relam", int64(2), "relnatts", int64(len(t.Columns)), "relhassubclass", false,
				"relacl", nil, "reloptions", nil, "relpartbound", nil,
				"pg_namespace.oid", int64(2200), "pg_namespace.nspname", "public", "pg_am.oid", int64(2), "pg_am.amname", "heap",
				"_bytes", t.Bytes, "_location", t.Location)
		}
	case name == "pg_attribute":
		for i, t := range m.tables {
			for j, f := range t.Columns {
				pt := typeOf(f.Type.Arrow())
				add("attrelid", int64(firstOID+i), "attname", f.Name, "atttypid", int64(pt.OID), "atttypmod", int64(pt.Mod),
					"attnum", int64(j+1), "attnotnull", !f.Nullable, "attisdropped", false, "atthasdef", false,
					"attidentity", "", "attgenerated", "", "attcollation", int64(0), "attlen", int64(pt.Size), "attndims", int64(0),
					"pg_class.oid", int64(firstOID+i), "pg_class.relname", t.Name, "pg_class.relkind", "r",
					"pg_class.relnamespace", int64(2200), "pg_namespace.oid", int64(2200), "pg_namespace.nspname", "public",
					"pg_type.oid", int64(pt.OID), "pg_type.typname", udtName(pt.OID), "_bytes", t.Bytes)
			}
		}
	case name == "pg_namespace":
		for _, s := range []struct {
			oid  int64
			name string
		}{{11, "pg_catalog"}, {2200, "public"}, {13000, "information_schema"}} {
			add("oid", s.oid, "nspname", s.name, "nspowner", int64(10), "nspacl", nil)
		}
	case name == "pg_database":
		add("oid", int64(1), "datname", db, "datdba", int64(10), "encoding", int64(6), "datcollate", "C", "datctype", "C",
			"datistemplate", false, "datallowconn", true, "datconnlimit", int64(-1), "datacl", nil, "rolname", user)
	case name == "pg_roles" || name == "pg_user" || name == "pg_authid":
		add("oid", int64(10), "rolname", user, "usename", user, "rolsuper", false, "rolinherit", true, "rolcreaterole", false,
			"rolcreatedb", false, "rolcanlogin", true, "rolreplication", false, "rolbypassrls", false, "rolconnlimit", int64(-1),
			"rolvaliduntil", nil, "usesysid", int64(10))
	case name == "pg_tables":
		for _, t := range m.tables {
			add("schemaname", "public", "tablename", t.Name, "tableowner", user, "tablespace", nil,
				"hasindexes", false, "hasrules", false, "hastriggers", false, "rowsecurity", false)
		}
	case name == "pg_type":
		for _, t := range pgTypes {
			add("oid", int64(t.oid), "typname", t.name, "typnamespace", int64(11), "typlen", int64(t.len), "typtype", "b",
				"typcategory", t.cat, "typelem", int64(0), "typarray", int64(0), "typbasetype", int64(0), "typtypmod", int64(-1),
				"typnotnull", false, "typrelid", int64(0), "pg_namespace.oid", int64(11), "pg_namespace.nspname", "pg_catalog")
		}
	case name == "pg_settings":
		keys := make([]string, 0, len(m.c.settings))
		for k := range m.c.settings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			add("name", k, "setting", m.c.settings[k])
		}
	}
	return rows, cols
}

var pgTypes = []struct {
	oid  uint32
	name string
	len  int
	cat  string
}{
	{oidBool, "bool", 1, "B"}, {oidChar, "char", 1, "S"}, {oidName, "name", 64, "S"}, {oidInt8, "int8", 8, "N"},
	{21, "int2", 2, "N"}, {oidInt4, "int4", 4, "N"}, {oidText, "text", -1, "S"}, {oidOID, "oid", 4, "N"},
	{700, "float4", 4, "N"}, {oidFloat8, "float8", 8, "N"}, {oidVarchar, "varchar", -1, "S"}, {oidDate, "date", 4, "D"},
	{oidTimestamp, "timestamp", 8, "D"}, {1184, "timestamptz", 8, "D"}, {oidInterval, "interval", 16, "T"},
	{oidNumeric, "numeric", -1, "N"}, {17, "bytea", -1, "U"},
}

func udtName(oid uint32) string {
	for _, t := range pgTypes {
		if t.oid == oid {
			return t.name
		}
	}
	return "text"
}

// formatType is pg_catalog.format_type(oid, typmod).
func formatType(oid, mod int64) string {
	switch uint32(oid) {
	case oidInt8:
		return "bigint"
	case oidInt4:
		return "integer"
	case 21:
		return "smallint"
	case oidFloat8:
		return "double precision"
	case 700:
		return "real"
	case oidBool:
		return "boolean"
	case oidText:
		return "text"
	case oidVarchar:
		return "character varying"
	case oidDate:
		return "date"
	case oidTimestamp:
		return "timestamp without time zone"
	case 1184:
		return "timestamp with time zone"
	case oidInterval:
		return "interval"
	case oidNumeric:
		if mod >= 4 {
			return fmt.Sprintf("numeric(%d,%d)", (mod-4)>>16, (mod-4)&0xffff)
		}
		return "numeric"
	}
	return udtName(uint32(oid))
}

func dataTypeName(t plan.DataType) string {
	pt := typeOf(t.Arrow())
	if pt.OID == oidNumeric {
		return "numeric"
	}
	return formatType(int64(pt.OID), -1)
}

func precision(t plan.DataType) any {
	switch t.ID {
	case plan.Decimal:
		return int64(t.Precision)
	case plan.Int64:
		return int64(64)
	case plan.Float64:
		return int64(53)
	}
	return nil
}

func scale(t plan.DataType) any {
	switch t.ID {
	case plan.Decimal:
		return int64(t.Scale)
	case plan.Int64:
		return int64(0)
	}
	return nil
}

// eval evaluates an expression over a row: a value (string, int64, bool,
// nil for NULL) or unknown.
func (m *emulation) eval(n *pg_query.Node, e env) any {
	if n == nil {
		return true
	}
	if v, ok := constValue(n); ok {
		return v
	}
	switch {
	case n.GetColumnRef() != nil:
		var parts []string
		for _, f := range n.GetColumnRef().Fields {
			parts = append(parts, strVal(f))
		}
		col := parts[len(parts)-1]
		if len(parts) == 1 {
			if v, ok := e[col]; ok {
				return v
			}
			for k, v := range e { // a column of a related relation
				if strings.HasSuffix(k, "."+col) {
					return v
				}
			}
			return unknown
		}
		q := parts[len(parts)-2]
		if v, ok := e[q+"."+col]; ok {
			return v
		}
		// A relation joined to the first one (n.nspname with n for
		// pg_namespace): its columns the first relation's rows know.
		if v, ok := e[m.aliases[q]+"."+col]; ok {
			return v
		}
		return unknown
	case n.GetTypeCast() != nil:
		v := m.eval(n.GetTypeCast().Arg, e)
		tn := typeNameOf(n.GetTypeCast().TypeName)
		switch tn {
		case "regclass":
			if i, ok := toInt(v); ok && i >= firstOID && int(i-firstOID) < len(m.tables) {
				return m.tables[i-firstOID].Name
			}
			if s, ok := v.(string); ok {
				for i, t := range m.tables {
					if t.Name == s {
						return int64(firstOID + i)
					}
				}
			}
			return unknown
		case "text", "varchar", "name":
			if v == nil || v == unknown {
				return v
			}
			return fmt.Sprint(v)
		case "int4", "int8", "int2", "oid":
			if i, ok := toInt(v); ok {
				return i
			}
		case "bool":
			if s, ok := v.(string); ok {
				return s == "t" || s == "true"
			}
		}
		return v
	case n.GetCollateClause() != nil:
		return m.eval(n.GetCollateClause().Arg, e)
	case n.GetBoolExpr() != nil:
		b := n.GetBoolExpr()
		switch b.Boolop {
		case pg_query.BoolExprType_AND_EXPR:
			out := any(true)
			for _, a := range b.Args {
				switch m.eval(a, e) {
				case false:
					return false
				case nil:
					out = nil
				}
			}
			return out
		case pg_query.BoolExprType_OR_EXPR:
			out := any(false)
			for _, a := range b.Args {
				switch v := m.eval(a, e); v {
				case true:
					return true
				case unknown:
					out = unknown
				}
			}
			return out
		case pg_query.BoolExprType_NOT_EXPR:
			if v, ok := m.eval(b.Args[0], e).(bool); ok {
				return !v
			}
			return unknown
		}
	case n.GetNullTest() != nil:
		t := n.GetNullTest()
		v := m.eval(t.Arg, e)
		if v == unknown {
			return unknown
		}
		return (v == nil) == (t.Nulltesttype == pg_query.NullTestType_IS_NULL)
	case n.GetAExpr() != nil:
		return m.evalOp(n.GetAExpr(), e)
	case n.GetCaseExpr() != nil:
		ce := n.GetCaseExpr()
		var arg any
		if ce.Arg != nil {
			arg = m.eval(ce.Arg, e)
		}
		for _, w := range ce.Args {
			cw := w.GetCaseWhen()
			var hit any
			if ce.Arg != nil {
				hit = compareOp("=", arg, m.eval(cw.Expr, e))
			} else {
				hit = m.eval(cw.Expr, e)
			}
			if hit == true {
				return m.eval(cw.Result, e)
			}
			if hit == unknown {
				return unknown
			}
		}
		if ce.Defresult != nil {
			return m.eval(ce.Defresult, e)
		}
		return nil
	case n.GetSqlvalueFunction() != nil:
		switch n.GetSqlvalueFunction().Op {
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
			return m.c.db
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
			return "public"
		default:
			return m.c.user
		}
	case n.GetFuncCall() != nil:
		return m.call(n.GetFuncCall(), e)
	case n.GetCoalesceExpr() != nil:
		for _, a := range n.GetCoalesceExpr().Args {
			if v := m.eval(a, e); v != nil {
				return v
			}
		}
		return nil
	}
	return unknown
}

func (m *emulation) evalOp(x *pg_query.A_Expr, e env) any {
	op := ""
	if len(x.Name) > 0 {
		op = strVal(x.Name[len(x.Name)-1])
	}
	switch x.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		return compareOp(op, m.eval(x.Lexpr, e), m.eval(x.Rexpr, e))
	case pg_query.A_Expr_Kind_AEXPR_IN:
		l := m.eval(x.Lexpr, e)
		out := any(false)
		for _, item := range x.Rexpr.GetList().GetItems() {
			switch compareOp("=", l, m.eval(item, e)) {
			case true:
				if op == "<>" {
					return false
				}
				return true
			case unknown:
				out = unknown
			}
		}
		if op == "<>" && out == false {
			return true
		}
		return out
	}
	return unknown
}

// compareOp applies a comparison or regex operator.
func compareOp(op string, l, r any) any {
	if l == unknown || r == unknown {
		return unknown
	}
	if l == nil || r == nil {
		return nil
	}
	switch op {
	case "~", "!~", "~*", "!~*":
		pat := fmt.Sprint(r)
		if strings.HasSuffix(op, "*") {
			pat = "(?i)" + pat
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return unknown
		}
		return re.MatchString(fmt.Sprint(l)) == !strings.HasPrefix(op, "!")
	}
	c := compare(l, r)
	switch op {
	case "=":
		return c == 0
	case "<>", "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return unknown
}

// compare orders two values: numerically when both are numbers, else as
// text (bools as t/f).
func compare(l, r any) int {
	li, lok := toInt(l)
	ri, rok := toInt(r)
	if lok && rok {
		switch {
		case li < ri:
			return -1
		case li > ri:
			return 1
		}
		return 0
	}
	return strings.Compare(text(l), text(r))
}

func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		if x {
			return "t"
		}
		return "f"
	}
	return fmt.Sprint(v)
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case string:
		i, err := strconv.ParseInt(x, 10, 64)
		return i, err == nil
	}
	return 0, false
}

func (m *emulation) call(fc *pg_query.FuncCall, e env) any {
	args := make([]any, len(fc.Args))
	for i, a := range fc.Args {
		args[i] = m.eval(a, e)
	}
	arg := func(i int) any {
		if i < len(args) {
			return args[i]
		}
		return nil
	}
	switch funcName(fc) {
	case "version":
		v := m.c.s.Version
		if v == "" {
			v = "dev"
		}
		return "PostgreSQL " + serverVersion + " (sluice " + v + ")"
	case "current_database":
		return m.c.db
	case "current_schema":
		return "public"
	case "current_schemas":
		if arg(0) == true {
			return "{pg_catalog,public}"
		}
		return "{public}"
	case "current_setting":
		if s, ok := arg(0).(string); ok {
			return m.c.setting(s)
		}
	case "set_config":
		if s, ok := arg(0).(string); ok {
			m.c.settings[lower(s)] = text(arg(1))
			return text(arg(1))
		}
	case "pg_backend_pid":
		return int64(m.c.pid)
	case "pg_is_in_recovery":
		return false
	case "pg_get_userbyid":
		return m.c.user
	case "pg_table_is_visible", "pg_type_is_visible", "pg_function_is_visible",
		"has_table_privilege", "has_schema_privilege", "has_database_privilege":
		return true
	case "format_type":
		if oid, ok := toInt(arg(0)); ok {
			mod, _ := toInt(arg(1))
			if arg(1) == nil {
				mod = -1
			}
			return formatType(oid, mod)
		}
	case "obj_description", "col_description", "shobj_description", "pg_get_expr":
		return nil
	case "pg_encoding_to_char":
		return "UTF8"
	case "pg_relation_size", "pg_total_relation_size", "pg_table_size":
		if b, ok := e["_bytes"]; ok {
			return b
		}
	case "pg_size_pretty":
		if b, ok := toInt(arg(0)); ok {
			return sizePretty(b)
		}
	case "array_to_string":
		if a := arg(0); a == nil || a == unknown {
			return ""
		}
	case "coalesce":
		for _, a := range args {
			if a != nil {
				return a
			}
		}
		return nil
	case "lower":
		if s, ok := arg(0).(string); ok {
			return strings.ToLower(s)
		}
	case "upper":
		if s, ok := arg(0).(string); ok {
			return strings.ToUpper(s)
		}
	}
	return unknown
}

func sizePretty(b int64) string {
	units := []string{"bytes", "kB", "MB", "GB", "TB"}
	v, i := b, 0
	for v >= 10*1024 && i < len(units)-1 {
		v, i = (v+512)/1024, i+1
	}
	return fmt.Sprintf("%d %s", v, units[i])
}

func constValue(n *pg_query.Node) (any, bool) {
	if n == nil {
		return nil, false
	}
	c := n.GetAConst()
	if c == nil {
		return nil, false
	}
	if c.Isnull {
		return nil, true
	}
	switch {
	case c.GetIval() != nil:
		return int64(c.GetIval().Ival), true
	case c.GetSval() != nil:
		return c.GetSval().Sval, true
	case c.GetBoolval() != nil:
		return c.GetBoolval().Boolval, true
	case c.GetFval() != nil:
		return c.GetFval().Fval, true
	}
	return int64(0), true // an Ival of 0 is encoded as no value
}

func typeNameOf(t *pg_query.TypeName) string {
	if t == nil || len(t.Names) == 0 {
		return ""
	}
	return lower(strVal(t.Names[len(t.Names)-1]))
}

func funcName(fc *pg_query.FuncCall) string {
	if len(fc.Funcname) == 0 {
		return ""
	}
	return lower(strVal(fc.Funcname[len(fc.Funcname)-1]))
}

func strVal(n *pg_query.Node) string {
	if s := n.GetString_(); s != nil {
		return s.Sval
	}
	return ""
}

func lower(s string) string { return strings.ToLower(s) }
