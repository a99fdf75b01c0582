package pgwire

import (
	"context"

	"fmt"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"slices"
	"sort"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/plan"
)

// The catalog as relations run by sluice's own planner and executor.
//
// A catalog SELECT is planned by planner.Plan over a catalog of virtual
// tables (pgCatalog): every pg_catalog and information_schema relation
// is a constant table (planner.TableInfo.Constant) built for this query
// from the sluice catalog and this session, which the planner binds as a
// Values leaf like any FROM item, so joins, subqueries, LIKE, CASE,
// window functions, aggregates and set operations are the engine's own.
// The functions and casts clients call are SQL functions of that catalog
// (planner.FunctionCatalog, as DuckDB defines its pg_catalog functions as
// macros): the session's values (user, database, settings, table oids)
// are constants in their bodies, so current_setting('x') or
// 'nation'::regclass fold to constants when planned. The plan then runs in
// this process (exec.RunGraph: each stage one task, every leaf constant),
// not as a job: a few thousand constant rows do not warrant functions and
// shuffle objects.
//
// Postgres arrays bind where their values are known when the query is
// bound (planner/arrays_pg.go): constants, and the catalog's array columns,
// which are Null columns since sluice has no values for them. The engine
// is the only evaluator: what the planner refuses (WITH RECURSIVE, arrays
// of run-time values, ...) is the client's coded error (SL005), never
// another evaluator's guess. docs/pgwire.md lists what it covers, and
// TestCatalogReplay checks every captured client query on it.

// catalogPath names who answered a catalog SELECT (for tests: every one
// is the engine's, pathEngine).
type catalogPath string

const pathEngine catalogPath = "engine"

// selectViaEngine plans and runs a catalog SELECT with sluice's planner
// and executor.
func (c *conn) selectViaEngine(ctx context.Context, sql string, n *pg_query.Node, m *emulation) (*result, error) {
	cat := &pgCatalog{m: m}
	if q, ok := regOutputsAsText(sql); ok {
		sql = q
	}
	p, err := planner.Plan(ctx, sql, cat, planner.Options{Partitions: 1, MinPartitions: 1, MaxPartitions: 1, Postgres: true})
	if err != nil {
		return nil, err // coded, with its position in the client's text
	}
	schema, recs, err := exec.RunGraph(ctx, p.Graph, exec.Options{})
	if err != nil {
		return nil, err
	}
	schema, recs = nullColumnsAsText(schema, recs)
	return &result{schema: pgNames(n, schema), recs: recs}, nil
}

// nullColumnsAsText makes the result columns of type Null (an untyped
// NULL, a NULL array) text columns of NULLs, as Postgres types them.
func nullColumnsAsText(schema *arrow.Schema, recs []arrow.RecordBatch) (*arrow.Schema, []arrow.RecordBatch) {
	fs := schema.Fields()
	any := false
	for i, f := range fs {
		if f.Type.ID() == arrow.NULL {
			fs[i].Type, fs[i].Nullable, any = arrow.BinaryTypes.String, true, true
		}
	}
	if !any {
		return schema, recs
	}
	out := arrow.NewSchema(fs, nil)
	for k, r := range recs {
		cols := make([]arrow.Array, len(fs))
		for i := range fs {
			if r.Column(i).DataType().ID() == arrow.NULL {
				b := array.NewStringBuilder(memory.DefaultAllocator)
				b.AppendNulls(int(r.NumRows()))
				cols[i] = b.NewArray()
				b.Release()
			} else {
				cols[i] = r.Column(i)
				cols[i].Retain()
			}
		}
		recs[k] = array.NewRecordBatch(out, cols, r.NumRows())
		for _, c := range cols {
			c.Release()
		}
		r.Release()
	}
	return out, recs
}

// pgCatalog is the Postgres catalog of one query as virtual tables and
// SQL functions (planner.FunctionCatalog).
type pgCatalog struct {
	m *emulation
}

var _ planner.FunctionCatalog = (*pgCatalog)(nil)

// Table returns a pg_catalog or information_schema relation as a constant
// table. An unqualified name is pg_catalog's, as Postgres's search path
// finds it; other names are unknown (a catalog SELECT reads no user
// table: routeSelect sends those to the engine's job path).
func (pc *pgCatalog) Table(_ context.Context, name string) (*planner.TableInfo, error) {
	schema, rel, ok := strings.Cut(lower(name), ".")
	if !ok {
		schema, rel = "pg_catalog", schema
	}
	def, found := catalogRelations[schema+"."+rel]
	if !found {
		return nil, fmt.Errorf("pgwire catalog: relation %s.%s: %w", schema, rel, planner.ErrUnknownTable)
	}
	cols := strings.Fields(def.cols)
	var rows []map[string]any
	if def.rows != nil {
		rows = def.rows(pc.m)
	}
	t := constantTable(rel, cols, rows)
	for i, col := range t.Columns {
		if slices.Contains(strings.Fields(def.text), col.Name) {
			t.Columns[i].Type = plan.StringType
		}
	}
	return t, nil
}

// constantTable builds a constant table of the named columns from rows
// of Go values (nil, int64, float64, bool, string). A column's type comes
// from its values, else from its Postgres type (catalogColumnType).
func constantTable(name string, cols []string, rows []map[string]any) *planner.TableInfo {
	t := &planner.TableInfo{Name: name, Format: "values", Constant: true, Rows: int64(len(rows))}
	for _, col := range cols {
		typ, known := plan.DataType{}, false
		for _, r := range rows {
			switch r[col].(type) {
			case int64:
				typ, known = plan.Int64Type, true
			case float64:
				typ, known = plan.Float64Type, true
			case bool:
				typ, known = plan.BoolType, true
			case string:
				typ, known = plan.StringType, true
			}
			if known {
				break
			}
		}
		if !known {
			typ = catalogColumnType(col)
		}
		t.Columns = append(t.Columns, plan.Field{Name: col, Type: typ, Nullable: true})
	}
	for _, r := range rows {
		row := make([]plan.Value, len(cols))
		for i, col := range cols {
			switch v := r[col].(type) {
			case nil:
				row[i] = plan.Value{Null: true}
			case int64:
				row[i] = plan.Value{I: v}
			case float64:
				row[i] = plan.Value{F: v}
			case bool:
				row[i] = plan.Value{B: v}
			case string:
				row[i] = plan.Value{S: v}
			default:
				row[i] = plan.Value{S: fmt.Sprint(v)}
			}
			if !row[i].Null && t.Columns[i].Type.ID == plan.Int64 && r[col] != nil {
				if f, isF := r[col].(float64); isF {
					row[i] = plan.Value{I: int64(f)}
				}
			}
		}
		t.Values = append(t.Values, row)
	}
	return t
}

// catalogColumnType is the engine type of a catalog column no row gives
// a value: its Postgres type (oid, int2/4/8 and the information_schema
// cardinal numbers are bigint, real is double, arrays are their text
// form, the rest text).
func catalogColumnType(col string) plan.DataType {
	if catalogArrayColumns[col] {
		// sluice has no values for these (no ACLs, options, index or
		// constraint keys ...): a Null column, which the planner binds
		// array operations over (planner/arrays_pg.go)
		return plan.NullType
	}
	if catalogBoolColumns[col] {
		return plan.BoolType
	}
	if catalogFloatColumns[col] {
		return plan.Float64Type
	}
	if catalogIntColumns[col] || col == "oid" {
		return plan.Int64Type
	}
	for _, suf := range []string{"_length", "_precision", "_radix", "_scale", "ordinal_position", "position_in_unique_constraint", "maximum_cardinality"} {
		if strings.HasSuffix(col, suf) {
			return plan.Int64Type // information_schema's cardinal_number
		}
	}
	return plan.StringType
}

var catalogBoolColumns = setOf(`indisunique indnullsnotdistinct indisprimary indisexclusion indimmediate indisclustered
indisvalid indcheckxmin indisready indislive indisreplident condeferrable condeferred convalidated conislocal
connoinherit inhdetachpending prosecdef proleakproof proisstrict proretset tgisinternal tgdeferrable tginitdeferred
seqcycle is_instead hasindexes ispopulated cycle collisdeterministic extrelocatable polpermissive pending_restart
rolsuper rolinherit rolcreaterole rolcreatedb rolcanlogin rolreplication rolbypassrls usecreatedb usesuper userepl
usebypassrls relhasindex relisshared relhasrules relhastriggers relhassubclass relrowsecurity relforcerowsecurity
relispopulated relispartition attbyval attnotnull atthasdef atthasmissing attisdropped attislocal typbyval
typispreferred typisdefined typnotnull datistemplate datallowconn hasrules hastriggers rowsecurity puballtables
pubinsert pubupdate pubdelete pubtruncate pubviaroot admin_option inherit_option set_option lanispl lanpltrusted
aggfinalextra aggmfinalextra condefault`)

var catalogArrayColumns = setOf(`relacl reloptions attacl attoptions attfdwoptions attmissingval nspacl typacl datacl
rolconfig useconfig proconfig proacl proargtypes proallargtypes proargmodes proargnames protrftypes indkey indcollation
indclass indoption conkey confkey conpfeqop conppeqop conffeqop confdelsetcols conexclop tgattr extconfig extcondition
partattrs partclass partcollation polroles stxkeys stxkind ftoptions enumvals prattrs datacl collacl defaclacl evttags
fdwacl fdwoptions srvacl srvoptions roles`)

var catalogFloatColumns = setOf(`reltuples procost prorows enumsortorder`)

var catalogIntColumns = setOf(`indexrelid indrelid indnatts indnkeyatts connamespace conrelid contypid conindid
conparentid confrelid coninhcount adrelid adnum objoid classoid objsubid inhrelid inhparent inhseqno pronamespace
proowner prolang provariadic prosupport pronargs pronargdefaults prorettype tgrelid tgparentid tgfoid tgtype
tgconstrrelid tgconstrindid tgconstraint tgnargs seqrelid seqtypid seqstart seqincrement seqmax seqmin seqcache
enumtypid classid objid refclassid refobjid refobjsubid ev_class collnamespace collowner collencoding extowner
extnamespace partrelid partnatts partdefid ftrelid ftserver polrelid stxrelid stxnamespace stxowner stxstattarget
start_value min_value max_value increment_by cache_size last_value relnamespace reltype reloftype relowner relam
relfilenode reltablespace relpages relallvisible reltoastrelid relnatts relchecks relrewrite relfrozenxid relminmxid
attrelid atttypid attstattarget attlen attnum attndims attcacheoff atttypmod attinhcount attcollation typnamespace
typowner typlen typrelid typsubscript typelem typarray typbasetype typtypmod typndims typcollation datdba encoding
datconnlimit datfrozenxid datminmxid dattablespace rolconnlimit usesysid nspowner pubowner pnpubid pnnspid prpubid
prrelid roleid member grantor spcowner lanowner lanplcallfoid laninline lanvalidator aggfnoid aggnumdirectargs
aggtransfn aggfinalfn aggcombinefn aggserialfn aggdeserialfn aggmtransfn aggminvtransfn aggmfinalfn aggsortop
aggtranstype aggtransspace aggmtranstype aggmtransspace conowner conforencoding contoencoding conproc defaclrole
defaclnamespace evtowner evtfoid fdwowner fdwhandler fdwvalidator srvowner srvfdw`)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// TableFunction is pg_get_keywords(): the parser's keywords.
func (pc *pgCatalog) TableFunction(name string, args []plan.Value) (*planner.TableInfo, bool) {
	if name != "pg_get_keywords" || len(args) != 0 {
		return nil, false
	}
	desc := map[byte]string{'U': "unreserved", 'C': "unreserved (cannot be function or type name)",
		'T': "reserved (can be function or type name)", 'R': "reserved"}
	var rows []map[string]any
	for _, k := range keywords {
		bare := "requires AS"
		if k.barelabel {
			bare = "can be bare label"
		}
		rows = append(rows, map[string]any{"word": k.word, "catcode": string(k.catcode), "barelabel": k.barelabel,
			"catdesc": desc[k.catcode], "baredesc": bare})
	}
	return constantTable("pg_get_keywords", []string{"word", "catcode", "barelabel", "catdesc", "baredesc"}, rows), true
}

// Function returns the SQL body of a catalog function or cast over the
// bound arguments args (nil: whether it has the name at all).
func (pc *pgCatalog) Function(name string, args []*plan.Expr) (string, bool, error) {
	if args == nil {
		var probe []*plan.Expr
		for n := 0; n <= 4; n++ {
			if _, ok, _ := pc.function(name, probe); ok {
				return "", true, nil
			}
			probe = append(probe, plan.Literal(plan.Value{Null: true}, plan.NullType))
		}
		return "", name == "json_build_object", nil
	}
	return pc.function(name, args)
}

func (pc *pgCatalog) function(name string, args []*plan.Expr) (string, bool, error) {
	c := pc.m.c
	nargs := len(args)
	typeOfArg := func(i int) plan.TypeID {
		if i < nargs && args[i] != nil {
			return args[i].Type.ID
		}
		return plan.Null
	}
	isString := typeOfArg(0) == plan.String || typeOfArg(0) == plan.Null
	// constName is the constant string argument 0, if it is one.
	constName := func() (string, bool) {
		if nargs > 0 && args[0] != nil && args[0].Op == plan.OpLiteral && !args[0].Value.Null && args[0].Type.ID == plan.String {
			return args[0].Value.S, true
		}
		return "", false
	}
	strict := func(body string) string { // NULL in, NULL out
		var conds []string
		for i := 1; i <= nargs; i++ {
			conds = append(conds, fmt.Sprintf("$%d IS NULL", i))
		}
		if len(conds) == 0 {
			return body
		}
		return "CASE WHEN " + strings.Join(conds, " OR ") + " THEN NULL ELSE " + body + " END"
	}
	switch {
	case nargs == 0:
		switch name {
		case "version":
			v := c.s.Version
			if v == "" {
				v = "dev"
			}
			return quoteLit("PostgreSQL " + serverVersion + " (sluice " + v + ")"), true, nil
		case "current_database", "current_catalog":
			return quoteLit(c.db), true, nil
		case "current_schema":
			return "'public'", true, nil
		case "current_user", "session_user", "user", "current_role":
			return quoteLit(c.user), true, nil
		case "pg_backend_pid":
			return strconv.FormatUint(uint64(c.pid), 10), true, nil
		case "pg_is_in_recovery", "pg_jit_available":
			return "false", true, nil
		case "pg_my_temp_schema":
			return "0", true, nil
		case "pg_client_encoding", "getdatabaseencoding":
			return "'UTF8'", true, nil
		case "txid_current", "pg_current_xact_id":
			return "1", true, nil
		}
	case name == "current_schemas" && nargs == 1:
		// an array: only where the planner reads a constant array
		// (subscripts, ANY, array_to_string; planner/arrays_pg.go)
		if args[0] != nil && args[0].Op == plan.OpLiteral && args[0].Type.ID == plan.Bool && !args[0].Value.Null {
			if args[0].Value.B {
				return "ARRAY['pg_catalog', 'public']", true, nil
			}
			return "ARRAY['public']", true, nil
		}
		return "CAST(NULL AS VARCHAR[])", args[0] != nil && args[0].Type.ID == plan.Null, nil
	case name == "current_setting" && (nargs == 1 || nargs == 2):
		if n, ok := constName(); ok {
			// a constant name, as clients write it: an unknown one is
			// Postgres's error, unless missing_ok is true
			if v, known := c.settings[lower(n)]; known {
				return quoteLit(v), true, nil
			}
			if v := c.setting(lower(n)); v != "" {
				return quoteLit(v), true, nil
			}
			missingOK := nargs == 2 && args[1] != nil && args[1].Op == plan.OpLiteral && args[1].Type.ID == plan.Bool &&
				!args[1].Value.Null && args[1].Value.B
			if nargs == 2 && !missingOK && (args[1] == nil || args[1].Op != plan.OpLiteral) {
				return pc.currentSetting(), true, nil // missing_ok known only when it runs
			}
			if !missingOK {
				return "", true, &paramError{state: "42704", msg: fmt.Sprintf("unrecognized configuration parameter %q", n)}
			}
			return "CAST(NULL AS VARCHAR)", true, nil
		}
		return pc.currentSetting(), true, nil
	case name == "pg_get_userbyid" && nargs == 1:
		return fmt.Sprintf("CASE WHEN $1 IS NULL THEN NULL WHEN $1 = 10 THEN %s ELSE 'unknown (OID=' || CAST($1 AS VARCHAR) || ')' END",
			quoteLit(c.user)), true, nil
	case name == "pg_is_other_temp_schema" && nargs == 1:
		return strict("false"), true, nil
	case (name == "pg_table_is_visible" || name == "pg_type_is_visible" || name == "pg_function_is_visible" ||
		name == "pg_collation_is_visible") && nargs == 1,
		strings.HasPrefix(name, "has_") && strings.HasSuffix(name, "_privilege") && nargs >= 2 && nargs <= 4:
		return strict("true"), true, nil // one user, who may read everything there is
	case name == "format_type" && nargs == 2:
		return formatTypeSQL(), true, nil
	case (name == "obj_description" || name == "col_description") && (nargs == 1 || nargs == 2),
		name == "shobj_description" && nargs == 2,
		name == "pg_get_serial_sequence" && nargs == 2, name == "pg_get_partkeydef" && nargs == 1,
		name == "pg_get_partition_constraintdef" && nargs == 1, name == "pg_tablespace_location" && nargs == 1,
		name == "pg_get_expr" && (nargs == 2 || nargs == 3),
		name == "pg_get_constraintdef" && (nargs == 1 || nargs == 2),
		name == "pg_get_indexdef" && (nargs == 1 || nargs == 3),
		(name == "pg_get_triggerdef" || name == "pg_get_ruledef") && (nargs == 1 || nargs == 2),
		(name == "pg_get_functiondef" || name == "pg_get_function_arguments" || name == "pg_get_function_result" ||
			name == "pg_get_function_identity_arguments" || name == "pg_get_statisticsobjdef" ||
			name == "pg_get_statisticsobjdef_columns") && nargs == 1:
		// sluice has no comments, defaults, constraints, indexes, views,
		// triggers, functions or statistics objects: the relations these
		// read are empty, and every object has no text.
		return "CAST(NULL AS VARCHAR)", true, nil
	case name == "pg_get_viewdef" && (nargs == 1 || nargs == 2):
		// a view's query text as it was created (Postgres prints it
		// re-formatted); any other relation has none (NULL)
		var b strings.Builder
		b.WriteString("CASE")
		for i, t := range pc.m.tables {
			if t.Format == "view" {
				fmt.Fprintf(&b, " WHEN $1 = %d THEN %s", firstOID+i, quoteLit(t.View))
			}
		}
		if b.Len() == len("CASE") {
			return "CAST(NULL AS VARCHAR)", true, nil
		}
		b.WriteString(" END")
		return b.String(), true, nil
	case name == "pg_database_size" && nargs == 1:
		// of the one database (oid 1, or its name): its tables' bytes
		var total int64
		for _, t := range pc.m.tables {
			total += t.Bytes
		}
		if isString {
			return fmt.Sprintf("CASE WHEN $1 = %s THEN %d END", quoteLit(c.db), total), true, nil
		}
		return fmt.Sprintf("CASE WHEN $1 = 1 THEN %d END", total), true, nil
	case statCounters[name] && nargs == 1:
		// the statistics collector's counters: sluice keeps none
		return strict("0"), true, nil
	case name == "pg_relation_is_publishable" && nargs == 1:
		return strict("false"), true, nil
	case name == "pg_encoding_to_char" && nargs == 1:
		return "CASE WHEN $1 IS NULL THEN NULL WHEN $1 = 0 THEN 'SQL_ASCII' ELSE 'UTF8' END", true, nil
	case (name == "pg_relation_size" || name == "pg_total_relation_size" || name == "pg_table_size") && nargs == 1:
		var b strings.Builder
		b.WriteString("CASE WHEN $1 IS NULL THEN NULL")
		for i, t := range pc.m.tables {
			fmt.Fprintf(&b, " WHEN $1 = %d THEN %d", firstOID+i, t.Bytes)
		}
		b.WriteString(" ELSE 0 END")
		return b.String(), true, nil
	case name == "pg_indexes_size" && nargs == 1:
		return strict("0"), true, nil
	case name == "quote_ident" && nargs == 1:
		var kw []string
		for _, k := range keywords {
			if k.catcode != 'U' {
				kw = append(kw, quoteLit(k.word))
			}
		}
		return `CASE WHEN $1 IS NULL THEN NULL WHEN regexp_matches($1, '^[a-z_][a-z0-9_$]*$') AND $1 NOT IN (` + strings.Join(kw, ", ") +
			`) THEN $1 ELSE '"' || replace($1, '"', '""') || '"' END`, true, nil
	case name == "json_build_object" && nargs%2 == 0:
		return jsonBuildObjectSQL(args), true, nil
	case name == "::oid" && nargs == 1:
		return "CAST($1 AS BIGINT)", true, nil
	case (name == "::regclass" || name == "::regtype" || name == "::regnamespace" || name == "::regrole" ||
		name == "::regproc" || name == "::regprocedure" || name == "::regoper" || name == "::regconfig") && nargs == 1 && !isString:
		return "CAST($1 AS BIGINT)", true, nil // a reg value is its oid
	case (name == "::regclass::text" || name == "::regclass::varchar" || name == "::regclass::name") && nargs == 1:
		if n, ok := constName(); ok {
			oid, found := pc.regclass(n)
			if !found {
				return "", true, plan.Errorf(plan.CodeUnknownTbl, "relation %q does not exist", n)
			}
			return "CASE WHEN $1 IS NULL THEN NULL ELSE " + strings.ReplaceAll(pc.relnameSQL(), "$1", strconv.FormatInt(oid, 10)) + " END", true, nil
		}
		if isString {
			return "$1", true, nil
		}
		return pc.relnameSQL(), true, nil
	case name == "::regclass" && nargs == 1, name == "to_regclass" && nargs == 1:
		if n, ok := constName(); ok {
			oid, found := pc.regclass(n)
			switch {
			case found:
				return strconv.FormatInt(oid, 10), true, nil
			case name == "to_regclass":
				return "CAST(NULL AS BIGINT)", true, nil
			}
			return "", true, plan.Errorf(plan.CodeUnknownTbl, "relation %q does not exist", n)
		}
		return pc.regclassSQL(), true, nil
	case name == "::regtype" && nargs == 1, name == "to_regtype" && nargs == 1:
		return regtypeSQL(), true, nil
	case name == "::regnamespace" && nargs == 1, name == "to_regnamespace" && nargs == 1:
		return fmt.Sprintf("CASE $1 WHEN 'pg_catalog' THEN %d WHEN 'public' THEN %d WHEN 'information_schema' THEN %d END",
			nspCatalog, nspPublic, nspInfo), true, nil
	case name == "::regrole" && nargs == 1, name == "to_regrole" && nargs == 1:
		return fmt.Sprintf("CASE $1 WHEN %s THEN 10 END", quoteLit(c.user)), true, nil
	}
	return "", false, nil
}

// statCounters are the statistics collector's per-relation counters
// (pg_stat_get_numscans(oid) ...), all 0 here.
var statCounters = setOf(`pg_stat_get_numscans pg_stat_get_tuples_returned pg_stat_get_tuples_fetched
pg_stat_get_tuples_inserted pg_stat_get_tuples_updated pg_stat_get_tuples_deleted pg_stat_get_tuples_hot_updated
pg_stat_get_live_tuples pg_stat_get_dead_tuples pg_stat_get_blocks_fetched pg_stat_get_blocks_hit`)

// jsonBuildObjectSQL is json_build_object(k1, v1, ...) over values of the
// types args: a JSON object's text, each value as JSON writes its type.
func jsonBuildObjectSQL(args []*plan.Expr) string {
	if len(args) == 0 {
		return "'{}'"
	}
	jsonString := func(x string) string {
		return `'"' || replace(replace(CAST(` + x + ` AS VARCHAR), '\', '\\'), '"', '\"') || '"'`
	}
	var parts []string
	for i := 0; i < len(args); i += 2 {
		k, v := fmt.Sprintf("$%d", i+1), fmt.Sprintf("$%d", i+2)
		var val string
		switch args[i+1].Type.ID {
		case plan.Null:
			val = "'null'"
		case plan.Bool:
			val = "CASE WHEN " + v + " IS NULL THEN 'null' WHEN " + v + " THEN 'true' ELSE 'false' END"
		case plan.Int64, plan.Float64, plan.Decimal:
			val = "COALESCE(CAST(" + v + " AS VARCHAR), 'null')"
		default:
			val = "COALESCE(" + jsonString(v) + ", 'null')"
		}
		sep := "', '"
		if i == 0 {
			sep = "'{'"
		}
		parts = append(parts, sep+" || "+jsonString(k)+" || ' : ' || "+val)
	}
	return strings.Join(parts, " || ") + " || '}'"
}

// currentSetting is current_setting(name [, missing_ok]) over this
// session's settings for a name known only when the query runs (a
// column): an unknown name reads NULL there, where Postgres raises 42704
// (a constant name does: pgCatalog.function).
func (pc *pgCatalog) currentSetting() string {
	c := pc.m.c
	keys := make([]string, 0, len(c.settings))
	for k := range c.settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("CASE lower($1)")
	for _, k := range keys {
		fmt.Fprintf(&b, " WHEN %s THEN %s", quoteLit(k), quoteLit(c.settings[k]))
	}
	for _, k := range []string{"session_authorization", "current_user", "session_user"} {
		if _, ok := c.settings[k]; !ok {
			fmt.Fprintf(&b, " WHEN %s THEN %s", quoteLit(k), quoteLit(c.user))
		}
	}
	b.WriteString(" END")
	return b.String()
}

// regclassSQL is x::regclass: a relation's name (optionally qualified,
// quoted or not) to its oid; an oid stays as it is. A regclass is its oid
// here (the engine has no reg types): printed, it is the number.
func (pc *pgCatalog) regclassSQL() string {
	var b strings.Builder
	b.WriteString("CASE $1")
	for i, t := range pc.m.tables {
		oid := firstOID + i
		for _, n := range []string{t.Name, "public." + t.Name, quoteIdent(t.Name), "public." + quoteIdent(t.Name)} {
			fmt.Fprintf(&b, " WHEN %s THEN %d", quoteLit(n), oid)
		}
	}
	var names []string
	for k := range catalogRelations {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		_, n, _ := strings.Cut(k, ".")
		if oid := catalogOID(n); oid != 0 {
			fmt.Fprintf(&b, " WHEN %s THEN %d", quoteLit(k), oid)
			if strings.HasPrefix(k, "pg_catalog.") {
				fmt.Fprintf(&b, " WHEN %s THEN %d", quoteLit(n), oid)
			}
		}
	}
	b.WriteString(" END")
	return b.String()
}

// regclass is the oid of the relation name names (unquoted parts fold
// to lower case; a user table is in public, a catalog relation in
// pg_catalog or information_schema).
func (pc *pgCatalog) regclass(name string) (int64, bool) {
	n := unquoteIdent(name)
	schema, rel, qualified := strings.Cut(n, ".")
	if !qualified {
		schema, rel = "", n
	}
	if schema == "" || schema == "public" {
		for i, t := range pc.m.tables {
			if t.Name == rel {
				return int64(firstOID + i), true
			}
		}
	}
	if schema == "" || schema == "pg_catalog" || schema == "information_schema" {
		if _, ok := catalogRelations[cmpOr(schema, "pg_catalog")+"."+rel]; ok {
			return catalogOID(rel), true
		}
	}
	return 0, false
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// relnameSQL is x::regclass::text of an oid: the relation's name (a
// catalog relation's without its schema, as on Postgres's search path),
// else the oid's digits.
func (pc *pgCatalog) relnameSQL() string {
	var b strings.Builder
	b.WriteString("CASE $1")
	for i, t := range pc.m.tables {
		fmt.Fprintf(&b, " WHEN %d THEN %s", firstOID+i, quoteLit(quoteIdent(t.Name)))
	}
	var names []string
	for k := range catalogRelations {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		schema, n, _ := strings.Cut(k, ".")
		if oid := catalogOID(n); oid != 0 {
			if schema != "pg_catalog" {
				n = k
			}
			fmt.Fprintf(&b, " WHEN %d THEN %s", oid, quoteLit(n))
		}
	}
	b.WriteString(" ELSE CAST($1 AS VARCHAR) END")
	return b.String()
}

// regtypeSQL is x::regtype: a type's name to its oid.
func regtypeSQL() string {
	var b strings.Builder
	b.WriteString("CASE $1")
	seen := map[string]bool{}
	for _, t := range pgTypes {
		for _, n := range []string{t.name, formatType(int64(t.oid), -1)} {
			if !seen[n] {
				seen[n] = true
				fmt.Fprintf(&b, " WHEN %s THEN %d", quoteLit(n), t.oid)
			}
		}
	}
	b.WriteString(" END")
	return b.String()
}

// formatTypeSQL is format_type(oid, typmod), as formatType.
func formatTypeSQL() string {
	var b strings.Builder
	b.WriteString("CASE WHEN $1 IS NULL THEN NULL")
	fmt.Fprintf(&b, " WHEN $1 = %d THEN CASE WHEN $2 >= 4 THEN 'numeric(' || CAST(($2 - 4) / 65536 AS VARCHAR) || ',' || "+
		"CAST(($2 - 4) %% 65536 AS VARCHAR) || ')' ELSE 'numeric' END", oidNumeric)
	for _, t := range pgTypes {
		if t.oid != oidNumeric {
			fmt.Fprintf(&b, " WHEN $1 = %d THEN %s", t.oid, quoteLit(formatType(int64(t.oid), -1)))
		}
	}
	b.WriteString(" ELSE 'text' END")
	return b.String()
}

// quoteLit is s as an SQL string literal.
func quoteLit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// regTypes are Postgres's reg* types: an oid that prints as a name.
var regTypes = setOf(`regclass regtype regnamespace regrole regproc regprocedure regoper regoperator regconfig regdictionary regcollation`)

// regOutputsAsText rewrites a SELECT whose output columns are reg* casts
// (c.oid::regclass) to print them as Postgres does, by name
// (x::regclass::text, which the catalog defines): inside the engine a reg
// value is its oid. ok false: nothing to rewrite.
func regOutputsAsText(sql string) (string, bool) {
	if !strings.Contains(lower(sql), "reg") { // no reg type named: nothing to parse again for
		return "", false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
		return "", false
	}
	changed := false
	var visit func(s *pg_query.SelectStmt)
	visit = func(s *pg_query.SelectStmt) {
		if s == nil {
			return
		}
		visit(s.Larg)
		visit(s.Rarg)
		for _, t := range s.TargetList {
			rt := t.GetResTarget()
			tc := rt.GetVal().GetTypeCast()
			if tc == nil || len(tc.TypeName.GetArrayBounds()) > 0 || !regTypes[typeNameOf(tc.TypeName)] {
				continue
			}
			text := &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("text")}, Typemod: -1, Location: -1}
			rt.Val = &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{Arg: rt.Val, TypeName: text, Location: -1}}}
			changed = true
		}
	}
	visit(tree.Stmts[0].Stmt.GetSelectStmt())
	if !changed {
		return "", false
	}
	q, err := pg_query.Deparse(tree)
	if err != nil {
		return "", false
	}
	return q, true
}
