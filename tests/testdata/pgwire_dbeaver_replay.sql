-- DBeaver's connect and schema-browse query sequence, RECONSTRUCTED FROM
-- DBEAVER'S SOURCE because DBeaver (a desktop application) cannot run
-- here: github.com/dbeaver/dbeaver at commit
-- 2428359b748778a5a345432906ab3da69289c20c (2024-10-24), plugin
-- plugins/org.jkiss.dbeaver.ext.postgresql/src/org/jkiss/dbeaver/ext/postgresql/
-- (paths below are relative to it). The statements are in the order DBeaver
-- sends them when it connects to a database with its default connection
-- settings (server version 15, so every "isServerVersionAtLeast" branch is
-- taken; templates and unavailable databases hidden) and a user opens the
-- nodes of the navigator: the database, its schemas, schema public, its
-- tables, one table (nation, oid 16386) with its columns, constraints,
-- indexes, triggers, rules and inheritance, then the functions, data types,
-- sequences, roles, tablespaces, extensions, encodings, collations and
-- settings. DBeaver binds its parameters through pgjdbc; here they are
-- substituted with the values DBeaver binds: database name 'sluice', schema
-- public's oid 2200 (pg_catalog's is 11), table nation's oid 16386, user
-- sluice's role oid 10.
--
-- Replayed in-process by TestDBeaverReplay (coordinator/pgwire) with the
-- answers in pgwire_dbeaver_replay.golden, and through pgjdbc against a
-- running sluice by TestClients/java-dbeaver (tests/clients_test.go), where
-- each statement is a PreparedStatement as DBeaver sends it.
-- Statements are separated by lines "-- ----"; a "-- from:" line names the
-- source file and method of the next statement.

-- from: model/PostgreDatabase.java readDatabaseInfo (the database of the connection, showNonDefaultDB off)
SELECT db.oid,db.* FROM pg_catalog.pg_database db WHERE datname='sluice'
-- ----
-- from: model/PostgreDataSource.java prepareReadDatabaseListStatement (with "show all databases" on; templates and unavailable hidden)
SELECT db.oid,db.* FROM pg_catalog.pg_database db WHERE 1 = 1 AND datallowconn AND NOT datistemplate OR db.datname ='sluice'
ORDER BY db.datname
-- ----
-- from: model/PostgreDataSource.java loadAvailableDatabases
SELECT current_database()
-- ----
-- from: model/PostgreDataSource.java initializeRemoteInstance -> SettingCache.prepareLookupStatement (standard_conforming_strings)
select * from pg_catalog.pg_settings where name='standard_conforming_strings'
-- ----
-- from: model/PostgreExecutionContext.java refreshDefaults
SELECT current_schema(),session_user
-- ----
-- from: model/PostgreDatabase.java SchemaCache.prepareLookupStatement (all schemas)
SELECT n.oid,n.*,d.description FROM pg_catalog.pg_namespace n
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=n.oid AND d.objsubid=0 AND d.classoid='pg_namespace'::regclass
 ORDER BY nspname
-- ----
-- from: model/PostgreExecutionContext.java refreshDefaults
SHOW search_path
-- ----
-- from: model/PostgreExecutionContext.java setSearchPath (schema public made the default: first, "$user" after it)
SET search_path = public,"$user"
-- ----
-- from: plugins/org.jkiss.dbeaver.model.jdbc/.../impl/jdbc/JDBCExecutionContext.java getTransactionIsolation -> pgjdbc's Connection.getTransactionIsolation
SHOW TRANSACTION ISOLATION LEVEL
-- ----
-- from: model/PostgreDataSource.java initialize
SELECT version()
-- ----
-- from: model/PostgreDataSource.java initialize -> PostgreUtils.isMetaObjectExists("pg_enum", "*") (getQueryForSystemColumnChecking)
SELECT * FROM pg_catalog.pg_enum WHERE 1<>1 LIMIT 1
-- ----
-- from: model/PostgreDataSource.java initialize -> PostgreUtils.isMetaObjectExists("pg_class", "reltype")
SELECT reltype FROM pg_catalog.pg_class WHERE 1<>1 LIMIT 1
-- ----
-- from: model/PostgreDatabase.java cacheDataTypes (readAllTypes off, typcategory supported)
SELECT t.oid,t.*,c.relkind,format_type(nullif(t.typbasetype, 0), t.typtypmod) as base_type_name, d.description
FROM pg_catalog.pg_type t
LEFT OUTER JOIN pg_catalog.pg_type et ON et.oid=t.typelem 
LEFT OUTER JOIN pg_catalog.pg_class c ON c.oid=t.typrelid
LEFT OUTER JOIN pg_catalog.pg_description d ON t.oid=d.objoid
WHERE t.typname IS NOT NULL
AND (c.relkind IS NULL OR c.relkind = 'c') AND (et.typcategory IS NULL OR et.typcategory <> 'C')
-- ----
-- from: model/PostgreDatabase.java EnumValueCache.prepareObjectsStatement (supportsEnumTable)
SELECT * FROM pg_catalog.pg_enum
-- ----
-- from: model/PostgreDatabase.java getDescription
select description from pg_shdescription join pg_database on objoid = pg_database.oid where datname = 'sluice'
-- ----
-- from: model/PostgreDataSource.java collectObjectStatistics (database sizes: pg_database_size, one database)
SELECT db.datname,pg_database_size(db.oid) FROM pg_catalog.pg_database db WHERE db.oid=1
-- ----
-- from: model/PostgreSchema.java readSchemaInfo
SELECT s.oid as schema_id
from pg_catalog.pg_namespace s
WHERE s.nspname ='public'
-- ----
-- from: model/PostgreSchema.java TableCache.prepareLookupStatement (tables, views, sequences of schema public)
SELECT c.oid,c.*,d.description,pg_catalog.pg_get_expr(c.relpartbound, c.oid) as partition_expr,  pg_catalog.pg_get_partkeydef(c.oid) as partition_key 
FROM pg_catalog.pg_class c
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=c.oid AND d.objsubid=0 AND d.classoid='pg_class'::regclass
WHERE c.relnamespace=2200 AND c.relkind not in ('i','I','c')
-- ----
-- from: model/PostgreSchema.java TableCache.prepareLookupStatement (one table by name)
SELECT c.oid,c.*,d.description,pg_catalog.pg_get_expr(c.relpartbound, c.oid) as partition_expr,  pg_catalog.pg_get_partkeydef(c.oid) as partition_key 
FROM pg_catalog.pg_class c
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=c.oid AND d.objsubid=0 AND d.classoid='pg_class'::regclass
WHERE c.relnamespace=2200 AND c.relkind not in ('i','I','c') AND relname='nation'
-- ----
-- from: model/PostgreSchema.java collectObjectStatistics (relation sizes of the schema)
select c.oid,pg_catalog.pg_total_relation_size(c.oid) as total_rel_size,pg_catalog.pg_relation_size(c.oid) as rel_size
FROM pg_class c
WHERE c.relnamespace=2200
-- ----
-- from: model/PostgreSchema.java cacheTableInheritance (inheritance of the schema's tables)
SELECT i.inhrelid relid, pc.relnamespace parent_ns, pc.oid parent_oid, i.inhseqno
FROM pg_catalog.pg_inherits i, pg_class rc, pg_class pc
WHERE rc.oid=i.inhrelid AND rc.relnamespace=2200 AND pc.oid=i.inhparent
-- ----
-- from: model/PostgreSchema.java TableCache.prepareChildrenStatement (columns of all tables of schema public)
SELECT c.relname,a.*,pg_catalog.pg_get_expr(ad.adbin, ad.adrelid, true) as def_value,dsc.description,dep.objid
FROM pg_catalog.pg_attribute a
INNER JOIN pg_catalog.pg_class c ON (a.attrelid=c.oid)
LEFT OUTER JOIN pg_catalog.pg_attrdef ad ON (a.attrelid=ad.adrelid AND a.attnum = ad.adnum)
LEFT OUTER JOIN pg_catalog.pg_description dsc ON (c.oid=dsc.objoid AND a.attnum = dsc.objsubid)
LEFT OUTER JOIN pg_depend dep on dep.refobjid = a.attrelid AND dep.deptype = 'i' and dep.refobjsubid = a.attnum and dep.classid = dep.refclassid
WHERE NOT a.attisdropped AND c.relkind not in ('i','I','c') AND c.relnamespace=2200
ORDER BY a.attnum
-- ----
-- from: model/PostgreSchema.java TableCache.prepareChildrenStatement (columns of table nation)
SELECT c.relname,a.*,pg_catalog.pg_get_expr(ad.adbin, ad.adrelid, true) as def_value,dsc.description,dep.objid
FROM pg_catalog.pg_attribute a
INNER JOIN pg_catalog.pg_class c ON (a.attrelid=c.oid)
LEFT OUTER JOIN pg_catalog.pg_attrdef ad ON (a.attrelid=ad.adrelid AND a.attnum = ad.adnum)
LEFT OUTER JOIN pg_catalog.pg_description dsc ON (c.oid=dsc.objoid AND a.attnum = dsc.objsubid)
LEFT OUTER JOIN pg_depend dep on dep.refobjid = a.attrelid AND dep.deptype = 'i' and dep.refobjsubid = a.attnum and dep.classid = dep.refclassid
WHERE NOT a.attisdropped AND c.relkind not in ('i','I','c') AND c.oid=16386
ORDER BY a.attnum
-- ----
-- from: model/PostgreSchema.java ConstraintCache.prepareObjectsStatement (constraints of schema public)
SELECT c.oid,c.*,t.relname as tabrelname,rt.relnamespace as refnamespace,d.description, case when c.contype='c' then "substring"(pg_get_constraintdef(c.oid), 7) else null end consrc_copy
FROM pg_catalog.pg_constraint c
INNER JOIN pg_catalog.pg_class t ON t.oid=c.conrelid
LEFT OUTER JOIN pg_catalog.pg_class rt ON rt.oid=c.confrelid
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=c.oid AND d.objsubid=0 AND d.classoid='pg_constraint'::regclass
WHERE t.relnamespace=2200
ORDER BY c.oid
-- ----
-- from: model/PostgreSchema.java ConstraintCache.prepareObjectsStatement (constraints of table nation)
SELECT c.oid,c.*,t.relname as tabrelname,rt.relnamespace as refnamespace,d.description, case when c.contype='c' then "substring"(pg_get_constraintdef(c.oid), 7) else null end consrc_copy
FROM pg_catalog.pg_constraint c
INNER JOIN pg_catalog.pg_class t ON t.oid=c.conrelid
LEFT OUTER JOIN pg_catalog.pg_class rt ON rt.oid=c.confrelid
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=c.oid AND d.objsubid=0 AND d.classoid='pg_constraint'::regclass
WHERE c.conrelid=16386
ORDER BY c.oid
-- ----
-- from: model/PostgreTable.java getReferences (tables referring to nation)
SELECT DISTINCT connamespace FROM pg_catalog.pg_constraint WHERE confrelid=16386
-- ----
-- from: model/PostgreSchema.java IndexCache.prepareObjectsStatement (indexes of schema public)
SELECT i.*,i.indkey as keys,c.relname,c.relnamespace,c.relam,c.reltablespace,tc.relname as tabrelname,dsc.description,pg_catalog.pg_get_expr(i.indpred, i.indrelid) as pred_expr,pg_catalog.pg_get_expr(i.indexprs, i.indrelid, true) as expr,pg_catalog.pg_relation_size(i.indexrelid) as index_rel_size,pg_catalog.pg_stat_get_numscans(i.indexrelid) as index_num_scans
FROM pg_catalog.pg_index i
INNER JOIN pg_catalog.pg_class c ON c.oid=i.indexrelid
INNER JOIN pg_catalog.pg_class tc ON tc.oid=i.indrelid
LEFT OUTER JOIN pg_catalog.pg_description dsc ON i.indexrelid=dsc.objoid
WHERE  c.relnamespace=2200 ORDER BY c.relname
-- ----
-- from: model/PostgreSchema.java IndexCache.prepareObjectsStatement (indexes of table nation)
SELECT i.*,i.indkey as keys,c.relname,c.relnamespace,c.relam,c.reltablespace,tc.relname as tabrelname,dsc.description,pg_catalog.pg_get_expr(i.indpred, i.indrelid) as pred_expr,pg_catalog.pg_get_expr(i.indexprs, i.indrelid, true) as expr,pg_catalog.pg_relation_size(i.indexrelid) as index_rel_size,pg_catalog.pg_stat_get_numscans(i.indexrelid) as index_num_scans
FROM pg_catalog.pg_index i
INNER JOIN pg_catalog.pg_class c ON c.oid=i.indexrelid
INNER JOIN pg_catalog.pg_class tc ON tc.oid=i.indrelid
LEFT OUTER JOIN pg_catalog.pg_description dsc ON i.indexrelid=dsc.objoid
WHERE  i.indrelid=16386 ORDER BY c.relname
-- ----
-- from: model/PostgreTableReal.java readTableStatistics (table nation)
select pg_catalog.pg_total_relation_size(16386) as total_rel_size,pg_catalog.pg_relation_size(16386) as rel_size
-- ----
-- from: model/PostgreTableReal.java TriggerCache.prepareLookupStatement (triggers of nation)
SELECT x.oid,x.*,p.pronamespace as func_schema_id,d.description
FROM pg_catalog.pg_trigger x
LEFT OUTER JOIN pg_catalog.pg_proc p ON p.oid=x.tgfoid 
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=x.oid AND d.objsubid=0 
WHERE x.tgrelid = 16386 AND NOT x.tgisinternal
-- ----
-- from: model/PostgreTableReal.java RuleCache.prepareObjectsStatement (rules of nation)
SELECT r.oid,r.*, pg_get_ruledef(r.oid) AS definition
FROM pg_rewrite r
WHERE r.ev_class=16386 AND r.rulename <> '_RETURN'::name
-- ----
-- from: model/PostgreTable.java initSuperTables (parents of nation)
SELECT i.*,c.relnamespace FROM pg_catalog.pg_inherits i,pg_catalog.pg_class c WHERE i.inhrelid=16386 AND c.oid=i.inhparent ORDER BY i.inhseqno
-- ----
-- from: model/PostgreTable.java getSubInheritance (children of nation)
SELECT i.*,c.relnamespace FROM pg_catalog.pg_inherits i,pg_catalog.pg_class c WHERE i.inhparent=16386 AND c.oid=i.inhrelid
-- ----
-- from: model/PostgreTable.java PolicyCache.prepareObjectsStatement (row-level security policies of nation)
select * from pg_catalog.pg_policies where schemaname='public' and tablename='nation'
-- ----
-- from: model/PostgreViewBase.java fetchViewQueryResultIfItNull (a view's definition; called for a view only, here with table nation's oid)
SELECT pg_get_viewdef(16386, true)
-- ----
-- from: model/PostgreSequence.java loadAdditionalInfo (a sequence's parameters; schema public has none)
SELECT * from pg_catalog.pg_sequences WHERE schemaname='public' AND sequencename='nosuch_seq'
-- ----
-- from: model/PostgreSchema.java ProceduresCache.prepareLookupStatement (functions of schema public)
SELECT p.oid as poid,p.*,pg_catalog.pg_get_expr(p.proargdefaults, 0) as arg_defaults,d.description
FROM pg_catalog.pg_proc p
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=p.oid and d.classoid='pg_proc'::regclass  AND d.objsubid = 0
WHERE p.pronamespace=2200
ORDER BY p.proname
-- ----
-- from: model/PostgreSchema.java AggregateCache.prepareObjectsStatement (aggregates of schema public)
SELECT p.oid AS proc_oid,p.proname AS proc_name,a.*
FROM pg_catalog.pg_aggregate a,pg_catalog.pg_proc p
WHERE p.oid=a.aggfnoid AND p.pronamespace=2200
ORDER BY p.proname
-- ----
-- from: model/PostgreSchema.java ExtensionCache.prepareObjectsStatement (extensions of schema public)
SELECT 
 e.oid,
 cfg.tbls,
 e.* 
FROM 
 pg_catalog.pg_extension e 
 join pg_namespace n on n.oid =e.extnamespace
 left join  (
         select
            ARRAY_AGG(ns.nspname || '.' ||  cls.relname) tbls, oid_ext
          from
            (
            select
                unnest(e1.extconfig) oid , e1.oid oid_ext
            from
                pg_catalog.pg_extension e1 ) c 
                join    pg_class cls on cls.oid = c.oid 
                join pg_namespace ns on ns.oid = cls.relnamespace
            group by oid_ext        
         ) cfg on cfg.oid_ext = e.oid

WHERE e.extnamespace=2200
ORDER BY e.oid
-- ----
-- from: model/PostgreSchema.java readDefaultPrivileges (default privileges of schema public)
SELECT * FROM pg_default_acl WHERE defaclnamespace = 2200
-- ----
-- from: model/PostgreDataTypeCache.java resolveDataType(oid) (one data type by oid: int8)
SELECT t.oid,t.*,c.relkind,format_type(nullif(t.typbasetype, 0), t.typtypmod) as base_type_name FROM pg_catalog.pg_type t
LEFT OUTER JOIN pg_class c ON c.oid=t.typrelid
LEFT OUTER JOIN pg_catalog.pg_description d ON t.oid=d.objoid
WHERE t.oid=20 
-- ----
-- from: model/PostgreDataTypeCache.java resolveDataType(name) (one data type by name: numeric)
SELECT t.oid,t.*,format_type(nullif(t.typbasetype, 0), t.typtypmod) as base_type_name FROM pg_catalog.pg_type t
LEFT OUTER JOIN pg_class c ON c.oid=t.typrelid
LEFT OUTER JOIN pg_catalog.pg_description d ON t.oid=d.objoid
WHERE t.typname='numeric' 
-- ----
-- from: model/PostgreDatabase.java RoleCache.prepareObjectsStatement
SELECT a.oid,a.*,pd.description FROM pg_catalog.pg_roles a 
left join pg_catalog.pg_shdescription pd on a.oid = pd.objoid
ORDER BY a.rolname
-- ----
-- from: model/PostgreRole.java MembersCache.prepareObjectsStatement (members of role sluice)
SELECT * FROM pg_catalog.pg_auth_members WHERE roleid=10
-- ----
-- from: model/PostgreRole.java MembersCache.prepareObjectsStatement (roles sluice belongs to)
SELECT * FROM pg_catalog.pg_auth_members WHERE member=10
-- ----
-- from: model/PostgreRole.java getPrivileges (table privileges of role sluice)
SELECT * FROM information_schema.table_privileges WHERE table_catalog='sluice' AND grantee='sluice'
-- ----
-- from: model/PostgreRole.java getPrivileges (routine privileges of role sluice)
SELECT * FROM information_schema.routine_privileges WHERE specific_catalog='sluice' AND grantee='sluice'
-- ----
-- from: model/PostgreRole.java getPrivileges (schemas, sequences and materialized views role sluice has privileges on)
SELECT * FROM (
	SELECT DISTINCT relnamespace,
	relacl,
	relname,
	relkind,
(aclexplode(relacl)).grantee as granteeI
FROM
	pg_class
WHERE
	relacl IS NOT NULL
	AND relnamespace IN (
SELECT oid
FROM pg_namespace
WHERE nspname NOT LIKE 'pg_%' AND nspname != 'information_schema')
UNION ALL
SELECT DISTINCT
	n.oid AS relnamespace,
	nspacl AS relacl,
	n.nspname AS relname,
	cast('C' as "char") AS relkind,
(aclexplode(nspacl)).grantee as granteeI
FROM
	pg_catalog.pg_namespace n
WHERE
	n.nspacl IS NOT NULL 
	) AS tr
WHERE tr.granteeI=10 AND tr.relkind IN('S', 'm', 'C')
-- ----
-- from: model/PostgreDatabase.java AccessMethodCache.prepareObjectsStatement
SELECT am.oid,am.* FROM pg_catalog.pg_am am 
ORDER BY am.oid
-- ----
-- from: model/PostgreDatabase.java EncodingCache.prepareObjectsStatement
SELECT c.contoencoding as encid,pg_catalog.pg_encoding_to_char(c.contoencoding) as encname
FROM pg_catalog.pg_conversion c
GROUP BY c.contoencoding
ORDER BY 2
-- ----
-- from: model/PostgreDatabase.java CollationCache.prepareObjectsStatement
SELECT c.oid,c.* FROM pg_catalog.pg_collation c 
ORDER BY c.oid
-- ----
-- from: model/PostgreDatabase.java LanguageCache.prepareObjectsStatement
SELECT l.oid,l.* FROM pg_catalog.pg_language l 
ORDER BY l.oid
-- ----
-- from: model/PostgreDatabase.java ForeignDataWrapperCache.prepareObjectsStatement
SELECT l.oid,l.*,p.pronamespace as handler_schema_id 
FROM pg_catalog.pg_foreign_data_wrapper l
LEFT OUTER JOIN pg_catalog.pg_proc p ON p.oid=l.fdwhandler 
ORDER BY l.fdwname
-- ----
-- from: model/PostgreDatabase.java ForeignServerCache.prepareObjectsStatement
SELECT l.oid,l.* FROM pg_catalog.pg_foreign_server l
ORDER BY l.srvname
-- ----
-- from: model/PostgreDatabase.java TablespaceCache.prepareObjectsStatement
SELECT t.oid,t.*,pg_tablespace_location(t.oid) loc
FROM pg_catalog.pg_tablespace t 
ORDER BY t.oid
-- ----
-- from: model/PostgreDatabase.java AvailableExtensionCache.prepareObjectsStatement
SELECT name,default_version,installed_version,comment FROM pg_catalog.pg_available_extensions ORDER BY name
-- ----
-- from: model/PostgreDatabase.java ExtensionCache.prepareObjectsStatement
SELECT 
 e.oid,
 cfg.tbls,
  n.nspname as schema_name,
 e.* 
FROM 
 pg_catalog.pg_extension e 
 join pg_namespace n on n.oid =e.extnamespace
 left join  (
         select
            ARRAY_AGG(ns.nspname || '.' ||  cls.relname) tbls, oid_ext
          from
            (
            select
                unnest(e1.extconfig) oid , e1.oid oid_ext
            from
                pg_catalog.pg_extension e1 ) c 
                join    pg_class cls on cls.oid = c.oid 
                join pg_namespace ns on ns.oid = cls.relnamespace
            group by oid_ext        
         ) cfg on cfg.oid_ext = e.oid
ORDER BY e.oid
-- ----
-- from: model/PostgreDatabase.java EventTriggersCache.prepareLookupStatement
SELECT pet.*, d.description FROM pg_catalog.pg_event_trigger pet
LEFT OUTER JOIN pg_catalog.pg_description d ON pet."oid" = d.objoid
-- ----
-- from: model/PostgreDataSource.java SettingCache.prepareLookupStatement (all settings)
select * from pg_catalog.pg_settings
