package pgwire

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/planner/plan"
)

// The statements clients send around their queries are answered here, in
// the coordinator, never as a job:
//
//   - SET / RESET / SHOW, kept per connection;
//   - BEGIN / COMMIT / ROLLBACK / DISCARD / DEALLOCATE (sluice is read-only:
//     each is acknowledged and does nothing);
//   - SELECTs that read pg_catalog or information_schema relations, or call
//     the session functions clients probe (version(), current_database(),
//     current_setting(), ...).
//
// A catalog SELECT is planned and run by sluice's own planner and executor
// over the catalog relations as constant tables (catalog_engine.go,
// catalog_rels.go); what the planner cannot plan is its coded error
// (SL005 for a shape it does not support), never a silently wrong
// answer. docs/pgwire.md lists what it covers;
// tests/testdata/pgwire_catalog_replay.sql holds the queries of pgjdbc,
// SQLAlchemy and psql they are checked with.

// answer handles sql when it is a session, transaction, cursor, COPY or
// catalog statement; n is its parse tree (nil: Postgres's grammar cannot
// read it, so it is the engine's). ok false: it is the engine's. With
// describe, SET and friends change nothing and nothing runs.
func (c *conn) answer(ctx context.Context, sql string, n *pg_query.Node, describe bool) (res *result, ok bool, err error) {
	if c.txStatus == txFailed && (n == nil || !endsAborted(n)) {
		return nil, true, errAborted
	}
	if n == nil {
		return nil, false, nil
	}
	switch {
	case n.GetVariableSetStmt() != nil:
		s := n.GetVariableSetStmt()
		if !describe {
			if err := c.set(s); err != nil {
				return nil, true, err
			}
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
			res := table([]string{"name", "setting", "description"}, rows)
			res.tag = "SHOW"
			return res, true, nil
		}
		v, found := c.settings[name]
		if !found && c.setting(name) == "" {
			return nil, true, &paramError{state: "42704", msg: fmt.Sprintf("unrecognized configuration parameter %q", name)}
		}
		if !found {
			v = c.setting(name)
		}
		res := table([]string{name}, [][]any{{v}})
		res.tag = "SHOW" // Postgres's tag for SHOW, without a row count
		return res, true, nil
	case n.GetTransactionStmt() != nil:
		res, err := c.transaction(n.GetTransactionStmt(), describe)
		return res, true, err
	case n.GetDiscardStmt() != nil:
		res, err := c.discard(n.GetDiscardStmt(), describe)
		return res, true, err
	case n.GetDeallocateStmt() != nil:
		res, err := c.deallocate(n.GetDeallocateStmt(), describe)
		return res, true, err
	case n.GetCopyStmt() != nil:
		res, err := c.copyStmt(ctx, sql, n.GetCopyStmt(), describe)
		return res, true, err
	case n.GetDeclareCursorStmt() != nil:
		res, err := c.declare(ctx, sql, n.GetDeclareCursorStmt(), describe)
		return res, true, err
	case n.GetFetchStmt() != nil:
		res, err := c.fetch(ctx, n.GetFetchStmt(), describe)
		return res, true, err
	case n.GetClosePortalStmt() != nil:
		res, err := c.closeCursor(n.GetClosePortalStmt().Portalname, describe)
		return res, true, err
	case n.GetSelectStmt() != nil:
		switch route, err := routeSelect(n); {
		case err != nil:
			return nil, true, err
		case route == routeEngine:
			return nil, false, nil
		}
		res, err := c.selectCatalog(ctx, sql, n)
		return res, true, err
	}
	return nil, false, nil
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

// isCatalogFunction reports whether the catalog defines a function of
// that name (pgCatalog.Function): a SELECT of no relation that calls one
// (SELECT pg_get_viewdef(16386, true)) is the catalog's.
func isCatalogFunction(name string) bool {
	pc := &pgCatalog{m: &emulation{c: &conn{s: &Server{}}}}
	_, ok, _ := pc.Function(name, nil)
	return ok
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
		if fc := m.GetFuncCall(); fc != nil && (catalogFuncs[funcName(fc)] || isCatalogFunction(funcName(fc))) {
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
	walkUntil(n, func(m *pg_query.Node) bool { fn(m); return true })
}

// walkUntil is walk that does not descend below a node for which fn
// returns false.
func walkUntil(n *pg_query.Node, fn func(*pg_query.Node) bool) {
	if n == nil {
		return
	}
	if !fn(n) {
		return
	}
	var visit func(m protoMsg)
	visit = func(m protoMsg) {
		r := m.ProtoReflect()
		r.Range(func(fd protoField, v protoValue) bool {
			switch {
			case fd.IsList():
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					if x, ok := l.Get(i).Message().Interface().(*pg_query.Node); ok {
						walkUntil(x, fn)
					} else if fd.Message() != nil {
						visit(l.Get(i).Message().Interface())
					}
				}
			case fd.Message() != nil:
				if x, ok := v.Message().Interface().(*pg_query.Node); ok {
					walkUntil(x, fn)
				} else {
					visit(v.Message().Interface())
				}
			}
			return true
		})
	}
	visit(n)
}

// table builds a result of text columns (SHOW's answers); a nil row
// value is NULL.
func table(names []string, rows [][]any) *result {
	fs := make([]arrow.Field, len(names))
	for j, name := range names {
		fs[j] = arrow.Field{Name: name, Type: arrow.BinaryTypes.String, Nullable: true}
	}
	schema := arrow.NewSchema(fs, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, r := range rows {
		for j, v := range r {
			if v == nil {
				b.Field(j).AppendNull()
				continue
			}
			b.Field(j).(*array.StringBuilder).Append(fmt.Sprint(v))
		}
	}
	return &result{schema: schema, recs: []arrow.RecordBatch{b.NewRecordBatch()}}
}

// selectCatalog answers a catalog SELECT with sluice's planner and
// executor over the catalog's relations as constant tables
// (catalog_engine.go). What the planner cannot plan is its coded error
// (SL005 for a shape it does not support), never another evaluator's
// answer.
func (c *conn) selectCatalog(ctx context.Context, sql string, n *pg_query.Node) (*result, error) {
	m := &emulation{c: c}
	if err := m.load(ctx); err != nil {
		return nil, err
	}
	c.lastCatalogPath = pathEngine
	return c.selectViaEngine(ctx, sql, n, m)
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
