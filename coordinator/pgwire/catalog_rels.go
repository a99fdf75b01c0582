package pgwire

import (
	"sort"
	"strconv"
	"strings"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/planner/plan"
)

// The emulated catalog relations. Those with rows are filled from the
// sluice catalog (tables get oids from 16384 in name order, in schema
// public); the others exist with their Postgres columns and no rows,
// since sluice has no indexes, constraints, sequences, triggers,
// comments or functions of its own. The other Postgres catalog relations
// (emptyRelations) only have oids, so that 'x'::regclass and the oids
// clients see stay stable; they, and any other pg_catalog or
// information_schema name, are unknown relations (SL002) until their
// columns are modelled here.

// Namespace oids.
const (
	nspCatalog = 11
	nspPublic  = 2200
	nspInfo    = 13000
)

// relationDef is a catalog relation: its columns and its rows.
type relationDef struct {
	cols string // space-separated
	rows func(m *emulation) []map[string]any
	// text are the columns that are text here though a column of that
	// name elsewhere is not (catalogColumnType types by name alone).
	text string
}

var catalogRelations = map[string]relationDef{
	"pg_catalog.pg_class": {
		cols: "oid relname relnamespace reltype reloftype relowner relam relfilenode reltablespace relpages reltuples " +
			"relallvisible reltoastrelid relhasindex relisshared relpersistence relkind relnatts relchecks relhasrules " +
			"relhastriggers relhassubclass relrowsecurity relforcerowsecurity relispopulated relreplident relispartition " +
			"relrewrite relfrozenxid relminmxid relacl reloptions relpartbound",
		rows: func(m *emulation) []map[string]any {
			var out []map[string]any
			for i, t := range m.tables {
				out = append(out, map[string]any{"oid": int64(firstOID + i), "relname": t.Name, "relnamespace": int64(nspPublic),
					"reltype": int64(0), "reloftype": int64(0), "relowner": int64(10), "relam": int64(2), "relfilenode": int64(0),
					"reltablespace": int64(0), "relpages": (t.Bytes + 8191) / 8192, "reltuples": float64(t.Rows),
					"relallvisible": int64(0), "reltoastrelid": int64(0), "relhasindex": false, "relisshared": false,
					"relpersistence": "p", "relkind": relKind(t), "relnatts": int64(len(t.Columns)), "relchecks": int64(0),
					"relhasrules": false, "relhastriggers": false, "relhassubclass": false, "relrowsecurity": false,
					"relforcerowsecurity": false, "relispopulated": true, "relreplident": "d", "relispartition": false,
					"relrewrite": int64(0), "relfrozenxid": int64(0), "relminmxid": int64(0)})
			}
			return out
		},
	},
	"pg_catalog.pg_attribute": {
		cols: "attrelid attname atttypid attstattarget attlen attnum attndims attcacheoff atttypmod attbyval attalign " +
			"attstorage attcompression attnotnull atthasdef atthasmissing attidentity attgenerated attisdropped attislocal " +
			"attinhcount attcollation attacl attoptions attfdwoptions attmissingval",
		rows: func(m *emulation) []map[string]any {
			var out []map[string]any
			for i, t := range m.tables {
				for j, f := range t.Columns {
					pt := typeOf(f.Type.Arrow())
					coll := int64(0)
					if pt.OID == oidText {
						coll = 100
					}
					out = append(out, map[string]any{"attrelid": int64(firstOID + i), "attname": f.Name, "atttypid": int64(pt.OID),
						"attstattarget": int64(-1), "attlen": int64(pt.Size), "attnum": int64(j + 1), "attndims": int64(0),
						"attcacheoff": int64(-1), "atttypmod": int64(pt.Mod), "attbyval": pt.Size > 0 && pt.Size <= 8,
						"attalign": "d", "attstorage": "p", "attcompression": "", "attnotnull": !f.Nullable, "atthasdef": false,
						"atthasmissing": false, "attidentity": "", "attgenerated": "", "attisdropped": false, "attislocal": true,
						"attinhcount": int64(0), "attcollation": coll})
				}
			}
			return out
		},
	},
	"pg_catalog.pg_namespace": {
		cols: "oid nspname nspowner nspacl",
		rows: func(*emulation) []map[string]any {
			return []map[string]any{
				{"oid": int64(nspCatalog), "nspname": "pg_catalog", "nspowner": int64(10)},
				{"oid": int64(nspPublic), "nspname": "public", "nspowner": int64(10)},
				{"oid": int64(nspInfo), "nspname": "information_schema", "nspowner": int64(10)},
			}
		},
	},
	"pg_catalog.pg_type": {
		cols: "oid typname typnamespace typowner typlen typbyval typtype typcategory typispreferred typisdefined typdelim " +
			"typrelid typsubscript typelem typarray typinput typoutput typreceive typsend typmodin typmodout typanalyze " +
			"typalign typstorage typnotnull typbasetype typtypmod typndims typcollation typdefaultbin typdefault typacl",
		rows: func(*emulation) []map[string]any {
			var out []map[string]any
			for _, t := range pgTypes {
				coll := int64(0)
				if t.cat == "S" && t.oid != oidChar {
					coll = 100
				}
				out = append(out, map[string]any{"oid": int64(t.oid), "typname": t.name, "typnamespace": int64(nspCatalog),
					"typowner": int64(10), "typlen": int64(t.len), "typbyval": t.len > 0 && t.len <= 8, "typtype": "b",
					"typcategory": t.cat, "typispreferred": false, "typisdefined": true, "typdelim": ",", "typrelid": int64(0),
					"typsubscript": int64(0), "typelem": int64(0), "typarray": int64(0), "typalign": "i", "typstorage": "p",
					"typnotnull": false, "typbasetype": int64(0), "typtypmod": int64(-1), "typndims": int64(0),
					"typcollation": coll})
			}
			return out
		},
	},
	"pg_catalog.pg_database": {
		cols: "oid datname datdba encoding datlocprovider datistemplate datallowconn datconnlimit datfrozenxid datminmxid " +
			"dattablespace datcollate datctype daticulocale datcollversion datacl",
		rows: func(m *emulation) []map[string]any {
			return []map[string]any{{"oid": int64(1), "datname": m.c.db, "datdba": int64(10), "encoding": int64(6),
				"datlocprovider": "c", "datistemplate": false, "datallowconn": true, "datconnlimit": int64(-1),
				"datfrozenxid": int64(0), "datminmxid": int64(1), "dattablespace": int64(1663), "datcollate": "C", "datctype": "C"}}
		},
	},
	"pg_catalog.pg_roles": {
		cols: "rolname rolsuper rolinherit rolcreaterole rolcreatedb rolcanlogin rolreplication rolconnlimit rolpassword " +
			"rolvaliduntil rolbypassrls rolconfig oid",
		rows: roleRows,
	},
	"pg_catalog.pg_authid": {
		cols: "oid rolname rolsuper rolinherit rolcreaterole rolcreatedb rolcanlogin rolreplication rolbypassrls rolconnlimit " +
			"rolpassword rolvaliduntil",
		rows: roleRows,
	},
	"pg_catalog.pg_user": {
		cols: "usename usesysid usecreatedb usesuper userepl usebypassrls passwd valuntil useconfig",
		rows: func(m *emulation) []map[string]any {
			return []map[string]any{{"usename": m.c.user, "usesysid": int64(10), "usecreatedb": false, "usesuper": false,
				"userepl": false, "usebypassrls": false, "passwd": "********"}}
		},
	},
	"pg_catalog.pg_tables": {
		cols: "schemaname tablename tableowner tablespace hasindexes hasrules hastriggers rowsecurity",
		rows: func(m *emulation) []map[string]any {
			var out []map[string]any
			for _, t := range m.tables {
				out = append(out, map[string]any{"schemaname": "public", "tablename": t.Name, "tableowner": m.c.user,
					"hasindexes": false, "hasrules": false, "hastriggers": false, "rowsecurity": false})
			}
			return out
		},
	},
	"pg_catalog.pg_settings": {
		cols: "name setting unit category short_desc extra_desc context vartype source min_val max_val enumvals boot_val " +
			"reset_val sourcefile sourceline pending_restart",
		rows: func(m *emulation) []map[string]any {
			keys := make([]string, 0, len(m.c.settings))
			for k := range m.c.settings {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var out []map[string]any
			defaults := defaultSettings()
			for _, k := range keys {
				out = append(out, map[string]any{"name": k, "setting": m.c.settings[k], "category": "", "short_desc": "",
					"context": "user", "vartype": "string", "source": "default", "boot_val": defaults[k],
					"reset_val": defaults[k], "pending_restart": false})
			}
			return out
		},
	},
	"pg_catalog.pg_am": {
		cols: "oid amname amhandler amtype",
		rows: func(*emulation) []map[string]any {
			return []map[string]any{
				{"oid": int64(2), "amname": "heap", "amhandler": "heap_tableam_handler", "amtype": "t"},
				{"oid": int64(403), "amname": "btree", "amhandler": "bthandler", "amtype": "i"},
				{"oid": int64(405), "amname": "hash", "amhandler": "hashhandler", "amtype": "i"},
			}
		},
	},
	"pg_catalog.pg_index": {cols: "indexrelid indrelid indnatts indnkeyatts indisunique indnullsnotdistinct indisprimary " +
		"indisexclusion indimmediate indisclustered indisvalid indcheckxmin indisready indislive indisreplident indkey " +
		"indcollation indclass indoption indexprs indpred"},
	"pg_catalog.pg_constraint": {cols: "oid conname connamespace contype condeferrable condeferred convalidated conrelid " +
		"contypid conindid conparentid confrelid confupdtype confdeltype confmatchtype conislocal coninhcount connoinherit " +
		"conkey confkey conpfeqop conppeqop conffeqop confdelsetcols conexclop conbin"},
	"pg_catalog.pg_attrdef":       {cols: "oid adrelid adnum adbin"},
	"pg_catalog.pg_description":   {cols: "objoid classoid objsubid description"},
	"pg_catalog.pg_shdescription": {cols: "objoid classoid description"},
	"pg_catalog.pg_inherits":      {cols: "inhrelid inhparent inhseqno inhdetachpending"},
	"pg_catalog.pg_proc": {cols: "oid proname pronamespace proowner prolang procost prorows provariadic prosupport prokind " +
		"prosecdef proleakproof proisstrict proretset provolatile proparallel pronargs pronargdefaults prorettype " +
		"proargtypes proallargtypes proargmodes proargnames proargdefaults protrftypes prosrc probin prosqlbody proconfig proacl"},
	"pg_catalog.pg_trigger": {cols: "oid tgrelid tgparentid tgname tgfoid tgtype tgenabled tgisinternal tgconstrrelid " +
		"tgconstrindid tgconstraint tgdeferrable tginitdeferred tgnargs tgattr tgargs tgqual tgoldtable tgnewtable"},
	"pg_catalog.pg_sequence": {cols: "seqrelid seqtypid seqstart seqincrement seqmax seqmin seqcache seqcycle"},
	"pg_catalog.pg_enum":     {cols: "oid enumtypid enumsortorder enumlabel"},
	"pg_catalog.pg_depend":   {cols: "classid objid objsubid refclassid refobjid refobjsubid deptype"},
	"pg_catalog.pg_rewrite":  {cols: "oid rulename ev_class ev_type ev_enabled is_instead ev_qual ev_action"},
	"pg_catalog.pg_views": {cols: "schemaname viewname viewowner definition",
		rows: func(m *emulation) []map[string]any {
			var out []map[string]any
			for _, t := range m.tables {
				if t.Format == "view" {
					out = append(out, map[string]any{"schemaname": "public", "viewname": t.Name, "viewowner": m.c.user,
						"definition": t.View})
				}
			}
			return out
		},
	},
	"pg_catalog.pg_matviews": {cols: "schemaname matviewname matviewowner tablespace hasindexes ispopulated definition"},
	"pg_catalog.pg_indexes":  {cols: "schemaname tablename indexname tablespace indexdef"},
	"pg_catalog.pg_sequences": {cols: "schemaname sequencename sequenceowner data_type start_value min_value max_value " +
		"increment_by cycle cache_size last_value"},
	"pg_catalog.pg_collation": {cols: "oid collname collnamespace collowner collprovider collisdeterministic collencoding " +
		"collcollate collctype colliculocale collversion"},
	"pg_catalog.pg_extension": {cols: "oid extname extowner extnamespace extrelocatable extversion extconfig extcondition"},
	"pg_catalog.pg_partitioned_table": {cols: "partrelid partstrat partnatts partdefid partattrs partclass partcollation " +
		"partexprs"},
	"pg_catalog.pg_foreign_table": {cols: "ftrelid ftserver ftoptions"},
	"pg_catalog.pg_policy":        {cols: "oid polname polrelid polcmd polpermissive polroles polqual polwithcheck"},
	"pg_catalog.pg_publication": {cols: "oid pubname pubowner puballtables pubinsert pubupdate pubdelete pubtruncate " +
		"pubviaroot"},
	"pg_catalog.pg_publication_namespace": {cols: "oid pnpubid pnnspid"},
	"pg_catalog.pg_publication_rel":       {cols: "oid prpubid prrelid prqual prattrs"},
	"pg_catalog.pg_auth_members":          {cols: "oid roleid member grantor admin_option inherit_option set_option"},
	"pg_catalog.pg_tablespace":            {cols: "oid spcname spcowner spcacl spcoptions"},
	"pg_catalog.pg_language": {cols: "oid lanname lanowner lanispl lanpltrusted lanplcallfoid laninline lanvalidator " +
		"lanacl"},
	"pg_catalog.pg_aggregate": {cols: "aggfnoid aggkind aggnumdirectargs aggtransfn aggfinalfn aggcombinefn aggserialfn " +
		"aggdeserialfn aggmtransfn aggminvtransfn aggmfinalfn aggfinalextra aggmfinalextra aggfinalmodify aggmfinalmodify " +
		"aggsortop aggtranstype aggtransspace aggmtranstype aggmtransspace agginitval aggminitval"},
	"pg_catalog.pg_conversion":           {cols: "oid conname connamespace conowner conforencoding contoencoding conproc condefault"},
	"pg_catalog.pg_default_acl":          {cols: "oid defaclrole defaclnamespace defaclobjtype defaclacl"},
	"pg_catalog.pg_event_trigger":        {cols: "oid evtname evtevent evtowner evtfoid evtenabled evttags"},
	"pg_catalog.pg_foreign_data_wrapper": {cols: "oid fdwname fdwowner fdwhandler fdwvalidator fdwacl fdwoptions"},
	"pg_catalog.pg_foreign_server":       {cols: "oid srvname srvowner srvfdw srvtype srvversion srvacl srvoptions"},
	"pg_catalog.pg_policies":             {cols: "schemaname tablename policyname permissive roles cmd qual with_check"},
	"pg_catalog.pg_available_extensions": {cols: "name default_version installed_version comment"},
	"pg_catalog.pg_statistic_ext":        {cols: "oid stxrelid stxname stxnamespace stxowner stxstattarget stxkeys stxkind stxexprs"},
	"information_schema.tables": {
		cols: "table_catalog table_schema table_name table_type self_referencing_column_name reference_generation " +
			"user_defined_type_catalog user_defined_type_schema user_defined_type_name is_insertable_into is_typed commit_action",
		rows: func(m *emulation) []map[string]any {
			var out []map[string]any
			for _, t := range m.tables {
				out = append(out, map[string]any{"table_catalog": m.c.db, "table_schema": "public", "table_name": t.Name,
					"table_type": tableType(t), "is_insertable_into": "NO", "is_typed": "NO"})
			}
			return out
		},
	},
	"information_schema.columns": {
		cols: "table_catalog table_schema table_name column_name ordinal_position column_default is_nullable data_type " +
			"character_maximum_length character_octet_length numeric_precision numeric_precision_radix numeric_scale " +
			"datetime_precision interval_type interval_precision character_set_catalog character_set_schema " +
			"character_set_name collation_catalog collation_schema collation_name domain_catalog domain_schema domain_name " +
			"udt_catalog udt_schema udt_name scope_catalog scope_schema scope_name maximum_cardinality dtd_identifier " +
			"is_self_referencing is_identity identity_generation identity_start identity_increment identity_maximum " +
			"identity_minimum identity_cycle is_generated generation_expression is_updatable",
		rows: func(m *emulation) []map[string]any {
			var out []map[string]any
			for _, t := range m.tables {
				for i, f := range t.Columns {
					pt := typeOf(f.Type.Arrow())
					row := map[string]any{"table_catalog": m.c.db, "table_schema": "public", "table_name": t.Name,
						"column_name": f.Name, "ordinal_position": int64(i + 1),
						"is_nullable": map[bool]string{true: "YES", false: "NO"}[f.Nullable], "data_type": dataTypeName(f.Type),
						"numeric_precision": precision(f.Type), "numeric_scale": scale(f.Type), "udt_catalog": m.c.db,
						"udt_schema": "pg_catalog", "udt_name": udtName(pt.OID), "dtd_identifier": strconv.Itoa(i + 1),
						"is_self_referencing": "NO", "is_identity": "NO", "identity_cycle": "NO", "is_generated": "NEVER",
						"is_updatable": "NO"}
					if p := precision(f.Type); p != nil {
						row["numeric_precision_radix"] = map[bool]int64{true: 10, false: 2}[f.Type.ID == plan.Decimal]
					}
					switch pt.OID {
					case oidText:
						row["character_octet_length"] = int64(1073741824)
					case oidDate:
						row["datetime_precision"] = int64(0)
					case oidTimestamp:
						row["datetime_precision"] = int64(6)
					}
					out = append(out, row)
				}
			}
			return out
		},
	},
	"information_schema.schemata": {
		cols: "catalog_name schema_name schema_owner default_character_set_catalog default_character_set_schema " +
			"default_character_set_name sql_path",
		rows: func(m *emulation) []map[string]any {
			var out []map[string]any
			for _, s := range []string{"pg_catalog", "public", "information_schema"} {
				out = append(out, map[string]any{"catalog_name": m.c.db, "schema_name": s, "schema_owner": m.c.user})
			}
			return out
		},
	},
	"information_schema.views": {cols: "table_catalog table_schema table_name view_definition check_option is_updatable " +
		"is_insertable_into is_trigger_updatable is_trigger_deletable is_trigger_insertable_into",
		rows: func(m *emulation) []map[string]any {
			var out []map[string]any
			for _, t := range m.tables {
				if t.Format == "view" {
					out = append(out, map[string]any{"table_catalog": m.c.db, "table_schema": "public", "table_name": t.Name,
						"view_definition": t.View, "check_option": "NONE", "is_updatable": "NO", "is_insertable_into": "NO",
						"is_trigger_updatable": "NO", "is_trigger_deletable": "NO", "is_trigger_insertable_into": "NO"})
				}
			}
			return out
		},
	},
	"information_schema.table_constraints": {cols: "constraint_catalog constraint_schema constraint_name table_catalog " +
		"table_schema table_name constraint_type is_deferrable initially_deferred enforced nulls_distinct"},
	"information_schema.key_column_usage": {cols: "constraint_catalog constraint_schema constraint_name table_catalog " +
		"table_schema table_name column_name ordinal_position position_in_unique_constraint"},
	"information_schema.referential_constraints": {cols: "constraint_catalog constraint_schema constraint_name " +
		"unique_constraint_catalog unique_constraint_schema unique_constraint_name match_option update_rule delete_rule"},
	"information_schema.constraint_column_usage": {cols: "table_catalog table_schema table_name column_name " +
		"constraint_catalog constraint_schema constraint_name"},
	"information_schema.check_constraints": {cols: "constraint_catalog constraint_schema constraint_name check_clause"},
	"information_schema.table_privileges": {cols: "grantor grantee table_catalog table_schema table_name " +
		"privilege_type is_grantable with_hierarchy", text: "grantor"},
	"information_schema.routine_privileges": {cols: "grantor grantee specific_catalog specific_schema specific_name " +
		"routine_catalog routine_schema routine_name privilege_type is_grantable", text: "grantor"},
	"information_schema.sequences": {cols: "sequence_catalog sequence_schema sequence_name data_type numeric_precision " +
		"numeric_precision_radix numeric_scale start_value minimum_value maximum_value increment cycle_option"},
}

// emptyRelations are the other Postgres 15 catalog relation names: they
// have oids (catalogOID), but no modelled columns, so they are not served
// (a name also in catalogRelations keeps the oid it has always had).
var emptyRelations = strings.Fields(`
pg_aggregate pg_amop pg_amproc pg_cast pg_conversion pg_db_role_setting pg_default_acl
pg_event_trigger pg_foreign_data_wrapper pg_foreign_server pg_init_privs pg_largeobject
pg_largeobject_metadata pg_opclass pg_operator pg_opfamily pg_parameter_acl pg_partitioned_table 
pg_range pg_replication_origin pg_seclabel pg_shdepend pg_shseclabel
pg_statistic pg_statistic_ext_data pg_subscription pg_subscription_rel pg_transform pg_ts_config
pg_ts_config_map pg_ts_dict pg_ts_parser pg_ts_template pg_user_mapping pg_available_extensions
pg_available_extension_versions pg_backend_memory_contexts pg_config pg_cursors pg_file_settings pg_group pg_hba_file_rules
pg_ident_file_rules pg_locks pg_policies pg_prepared_statements pg_prepared_xacts pg_publication_tables
pg_replication_origin_status pg_replication_slots pg_rules pg_seclabels pg_shadow pg_shmem_allocations pg_stats
pg_stats_ext pg_stats_ext_exprs pg_timezone_abbrevs pg_timezone_names pg_user_mappings pg_stat_activity
pg_stat_all_tables pg_stat_user_tables pg_stat_all_indexes pg_stat_user_indexes pg_statio_all_tables
pg_statio_user_tables pg_stat_database pg_stat_replication pg_stat_ssl pg_stat_gssapi pg_stat_progress_vacuum
pg_stat_bgwriter pg_stat_wal pg_stat_archiver pg_stat_subscription pg_stat_user_functions pg_stat_statements
information_schema.routines information_schema.parameters information_schema.triggers information_schema.domains
information_schema.element_types information_schema.attributes information_schema.character_sets
information_schema.collations information_schema.column_privileges information_schema.table_privileges
information_schema.routine_privileges information_schema.usage_privileges information_schema.enabled_roles
information_schema.applicable_roles information_schema.administrable_role_authorizations
information_schema.foreign_tables information_schema.foreign_servers information_schema.user_defined_types
information_schema.view_table_usage information_schema.view_column_usage information_schema.column_udt_usage
information_schema.constraint_table_usage information_schema.domain_constraints information_schema.role_table_grants
information_schema.role_column_grants information_schema.role_routine_grants information_schema.table_constraints_ext
information_schema.information_schema_catalog_name information_schema.sql_features information_schema.sql_implementation_info
information_schema.sql_parts information_schema.sql_sizing`)

// catalogOIDs are the oids of the catalog relations clients name with
// 'pg_class'::regclass; the others get oids from 12000 by name.
var catalogOIDs = map[string]int64{
	"pg_type": 1247, "pg_attribute": 1249, "pg_proc": 1255, "pg_class": 1259, "pg_authid": 1260, "pg_database": 1262,
	"pg_am": 2601, "pg_attrdef": 2604, "pg_constraint": 2606, "pg_description": 2609, "pg_index": 2610,
	"pg_inherits": 2611, "pg_namespace": 2615, "pg_trigger": 2620, "pg_rewrite": 2618, "pg_depend": 2608,
	"pg_shdescription": 2396, "pg_sequence": 2224, "pg_enum": 3501, "pg_collation": 3456, "pg_extension": 3079,
}

func roleRows(m *emulation) []map[string]any {
	return []map[string]any{{"oid": int64(10), "rolname": m.c.user, "rolsuper": false, "rolinherit": true,
		"rolcreaterole": false, "rolcreatedb": false, "rolcanlogin": true, "rolreplication": false, "rolconnlimit": int64(-1),
		"rolpassword": "********", "rolbypassrls": false}}
}

// catalogOID is the oid of a catalog relation by name (0: none).
func catalogOID(name string) int64 {
	if oid, ok := catalogOIDs[name]; ok {
		return oid
	}
	var names []string
	for k := range catalogRelations {
		names = append(names, k)
	}
	names = append(names, emptyRelations...)
	sort.Strings(names)
	for i, n := range names {
		if n == "pg_catalog."+name || n == name {
			return int64(12000 + i)
		}
	}
	return 0
}

// unquoteIdent folds an identifier as Postgres reads it: unquoted parts
// lower-cased, quoted ones as written.
func unquoteIdent(s string) string {
	var parts []string
	for _, p := range strings.Split(s, ".") {
		p = strings.TrimSpace(p)
		if len(p) >= 2 && p[0] == '"' && p[len(p)-1] == '"' {
			parts = append(parts, strings.ReplaceAll(p[1:len(p)-1], `""`, `"`))
		} else {
			parts = append(parts, strings.ToLower(p))
		}
	}
	return strings.Join(parts, ".")
}

// relKind is pg_class.relkind of a catalog table: 'v' for a view (CREATE
// VIEW), else 'r'.
func relKind(t coordinator.TableInfo) string {
	if t.Format == "view" {
		return "v"
	}
	return "r"
}

// tableType is information_schema.tables.table_type of a catalog table.
func tableType(t coordinator.TableInfo) string {
	if t.Format == "view" {
		return "VIEW"
	}
	return "BASE TABLE"
}
