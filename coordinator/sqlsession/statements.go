package sqlsession

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/catalog"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// RunStatement implements coordinator.StatementRunner: plain queries are
// submitted as jobs; table statements work on the Redis catalog; CREATE
// TABLE AS and COPY run their query as a job and write its result into
// the bucket with the commit protocol: the result stage's tasks write the
// files (plan.KindWrite), then coordinator.StatementEnv.CommitWritten
// writes the commit marker.
func (p *Session) RunStatement(ctx context.Context, sql string, env *coordinator.StatementEnv) (*coordinator.StatementResult, error) {
	st, err := planner.ParseStatement(sql)
	if err != nil {
		return nil, err
	}
	if st.Kind == planner.StmtQuery {
		job, err := env.Submit(ctx, sql)
		if err != nil {
			return nil, err
		}
		return &coordinator.StatementResult{Job: job}, nil
	}
	if st.Kind == planner.StmtExplain {
		return p.explain(ctx, st, env)
	}
	cat, ok := p.Catalog.(*catalog.Store)
	if !ok {
		return nil, fmt.Errorf("catalog %T cannot run %s", p.Catalog, st.Kind)
	}
	switch st.Kind {
	case planner.StmtShowTables:
		ts, err := cat.List(ctx)
		if err != nil {
			return nil, err
		}
		rs := newResultSet("name", "format", "columns:int", "files:int", "rows:int", "rows_kind", "bytes:int", "location")
		for _, t := range ts {
			kind := "exact"
			if t.RowsEstimated {
				kind = "estimate" // CSV: from a sample's average line length
			}
			if t.View != "" {
				rs.add(t.Name, t.Format, int64(len(t.Columns)), int64(0), nil, "", nil, "")
				continue
			}
			rs.add(t.Name, t.Format, int64(len(t.Columns)), int64(len(t.Files)), t.Rows, kind, t.Bytes, p.s3URL(env, t.Location))
		}
		return rs.result(), nil
	case planner.StmtDescribe:
		cols, err := p.describeColumns(ctx, cat, st.Name)
		if err != nil {
			return nil, unknownTable(st, err)
		}
		rs := newResultSet("column", "type", "nullable")
		for _, c := range cols {
			null := "yes"
			if !c.Nullable {
				null = "no"
			}
			rs.add(c.Name, c.Type.SQLName(), null)
		}
		return rs.result(), nil
	case planner.StmtDropTable:
		t, err := cat.Get(ctx, st.Name)
		if err != nil {
			if errors.Is(err, planner.ErrUnknownTable) && st.IfExists {
				return status("table %s does not exist, nothing dropped", st.Name), nil
			}
			return nil, unknownTable(st, err)
		}
		if t.View != "" {
			return nil, &planner.Error{Code: planner.CodeWrongKind, Pos: st.NamePos,
				Msg: fmt.Sprintf("%s is a view, not a table (use DROP VIEW %s)", t.Name, t.Name)}
		}
		if err := cat.Drop(ctx, st.Name); err != nil {
			return nil, err
		}
		return status("dropped table %s (its files stay in the bucket)", st.Name), nil
	case planner.StmtCreateExternal:
		return p.createExternal(ctx, cat, st, env)
	case planner.StmtCreateTableAs:
		return p.createTableAs(ctx, cat, st, env)
	case planner.StmtCopy:
		return p.copyTo(ctx, cat, st, env)
	case planner.StmtInsert:
		return p.insertInto(ctx, cat, st, env)
	case planner.StmtCreateView:
		return p.createView(ctx, cat, st)
	case planner.StmtDropView:
		return p.dropView(ctx, cat, st)
	}
	return nil, &planner.Error{Code: planner.CodeUnsupported, Pos: 1, Msg: "unsupported: statement " + string(st.Kind)}
}

// checkName refuses a table name CREATE cannot use (CodeBadName), before
// anything is inspected or written: a name becomes a Redis field and the
// folder of a CREATE TABLE AS table's files ("zz/x" would write into table
// zz's).
func checkName(st *planner.Statement) error {
	if err := catalog.CheckName(st.Name); err != nil {
		return &planner.Error{Code: planner.CodeBadName, Pos: st.NamePos, Msg: fmt.Sprintf("CREATE TABLE %q: %v", st.Name, err)}
	}
	return nil
}

// writeTarget checks, at planning, that a statement may write files under
// the key prefix key: a valid prefix (with room for the file names), not
// inside any of reserved (the coordinator's own data) nor inside the
// location of a registered table. The error (CodeBadLocation) names the
// target as what, at pos.
func (p *Session) writeTarget(ctx context.Context, cat *catalog.Store, env *coordinator.StatementEnv, key string, reserved []string, what string, pos int) error {
	bad := func(format string, args ...any) error {
		return &planner.Error{Code: planner.CodeBadLocation, Pos: pos, Msg: what + ": " + fmt.Sprintf(format, args...)}
	}
	if err := objstore.ValidatePrefix(key); err != nil {
		return bad("not a valid key prefix: %v", err)
	}
	if len(key) > objstore.MaxKeyLen-maxWriteName {
		return bad("a prefix of %d bytes leaves no room for the file names (at most %d)", len(key), objstore.MaxKeyLen-maxWriteName)
	}
	for _, c := range strings.Split(key, "/") {
		if c == "." {
			return bad(`not a valid key prefix: a "." path component`)
		}
	}
	for _, r := range reserved {
		if strings.HasPrefix(key, r) {
			return bad("inside sluice's own data (%s): write outside %s", p.s3URL(env, r), strings.Join(reserved, ", "))
		}
	}
	tables, err := cat.List(ctx)
	if err != nil {
		return err
	}
	for _, t := range tables {
		// A table lists its files under its location as a raw prefix
		// ("data/t" sees "data/t2/..." too), except a table of one file,
		// which holds that key alone. A view has no location.
		inside := strings.HasPrefix(key, t.Location)
		if ext, _ := objstore.DataExt(t.Location); ext != "" && !strings.HasSuffix(t.Location, "/") && len(t.Files) == 1 && t.Files[0].Key == t.Location {
			inside = key == t.Location || strings.HasPrefix(key, t.Location+"/")
		}
		if t.View == "" && inside {
			return bad("inside the location of table %s (%s): its files would change the table", t.Name, p.s3URL(env, t.Location))
		}
	}
	return nil
}

// maxWriteName bounds what a write adds to its prefix: a file
// (JOB-NNNNN.FORMAT) or the commit marker (_sluice_commit_JOB).
const maxWriteName = 96

func unknownTable(st *planner.Statement, err error) error {
	if errors.Is(err, planner.ErrUnknownTable) {
		return &planner.Error{Code: planner.CodeUnknownTbl, Pos: st.NamePos, Msg: fmt.Sprintf("unknown table %s", st.Name)}
	}
	return err
}

// describeColumns returns a table's columns as DESCRIBE shows them: the
// catalog entry's, except that an Iceberg table is brought to its newest
// metadata first, and "t@ref" describes that snapshot.
func (p *Session) describeColumns(ctx context.Context, cat *catalog.Store, name string) ([]plan.Field, error) {
	t, err := cat.Get(ctx, name)
	if err != nil && !strings.Contains(name, "@") {
		return nil, err
	}
	if err == nil && t.Format != "iceberg" {
		return t.Columns, nil
	}
	info, err := cat.Table(ctx, name)
	if err != nil {
		return nil, err
	}
	return info.Columns, nil
}

// s3URL names a key prefix of the coordinator's bucket as a location.
func (p *Session) s3URL(env *coordinator.StatementEnv, key string) string {
	return "s3://" + env.BucketName() + "/" + key
}

// location checks an s3:// location of a statement and returns its key.
func location(st *planner.Statement, env *coordinator.StatementEnv) (string, error) {
	u, err := url.Parse(st.Location)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return "", &planner.Error{Code: planner.CodeBadLocation, Pos: st.LocationPos,
			Msg: fmt.Sprintf("location %q: want 's3://BUCKET/PREFIX/'", st.Location)}
	}
	if u.Host != env.BucketName() {
		return "", &planner.Error{Code: planner.CodeBadLocation, Pos: st.LocationPos,
			Msg: fmt.Sprintf("location %q: files must be in the bucket sluice runs on (%s)", st.Location, env.BucketName())}
	}
	return strings.TrimPrefix(u.Path, "/"), nil
}

func (p *Session) exists(ctx context.Context, cat *catalog.Store, st *planner.Statement) (bool, error) {
	_, err := cat.Get(ctx, st.Name)
	switch {
	case err == nil:
		if st.IfNotExists {
			return true, nil
		}
		return true, &planner.Error{Code: planner.CodeTableExists, Pos: st.NamePos,
			Msg: fmt.Sprintf("table %s already exists (DROP TABLE %s first, or CREATE ... IF NOT EXISTS)", st.Name, st.Name)}
	case errors.Is(err, planner.ErrUnknownTable):
		return false, nil
	}
	return false, err
}

func (p *Session) createExternal(ctx context.Context, cat *catalog.Store, st *planner.Statement, env *coordinator.StatementEnv) (*coordinator.StatementResult, error) {
	if err := checkName(st); err != nil {
		return nil, err
	}
	if ok, err := p.exists(ctx, cat, st); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return status("table %s exists, not created", st.Name), nil
	}
	key, err := location(st, env)
	if err != nil {
		return nil, err
	}
	var t *catalog.Table
	switch st.Format {
	case "parquet":
		if len(st.Options) > 0 {
			return nil, &planner.Error{Code: planner.CodeBadOption, Pos: st.LocationPos, Msg: "Parquet tables take no OPTIONS"}
		}
		var opts catalog.ParquetOptions
		if st.Schema != "" { // the types of hive partition keys
			if opts.Schema, err = catalog.ParseSchema(st.Schema); err != nil {
				return nil, &planner.Error{Code: planner.CodeBadOption, Pos: st.SchemaPos, Msg: "column list: " + err.Error()}
			}
		}
		t, err = catalog.InspectParquet(ctx, env.Bucket(), st.Name, key, opts)
	case "csv":
		var opts catalog.CSVOptions
		if opts, err = catalog.ParseCSVOptions(st.Options); err != nil {
			return nil, &planner.Error{Code: planner.CodeBadOption, Pos: st.LocationPos, Msg: "OPTIONS: " + err.Error()}
		}
		if st.Schema != "" {
			if opts.Schema, err = catalog.ParseSchema(st.Schema); err != nil {
				return nil, &planner.Error{Code: planner.CodeBadOption, Pos: st.SchemaPos, Msg: "column list: " + err.Error()}
			}
		}
		t, err = catalog.InspectCSV(ctx, env.Bucket(), st.Name, key, opts)
	case "json":
		if len(st.Options) > 0 {
			return nil, &planner.Error{Code: planner.CodeBadOption, Pos: st.LocationPos, Msg: "JSON tables take no OPTIONS"}
		}
		if st.Schema != "" {
			return nil, &planner.Error{Code: planner.CodeBadOption, Pos: st.SchemaPos, Msg: "JSON tables take no column list (the schema is inferred from the first file)"}
		}
		t, err = catalog.InspectJSON(ctx, env.Bucket(), st.Name, key, false)
	case "iceberg":
		if len(st.Options) > 0 {
			return nil, &planner.Error{Code: planner.CodeBadOption, Pos: st.LocationPos, Msg: "Iceberg tables take no OPTIONS"}
		}
		if st.Schema != "" {
			return nil, &planner.Error{Code: planner.CodeBadOption, Pos: st.SchemaPos, Msg: "Iceberg tables take no column list (the schema is the table's)"}
		}
		t, err = catalog.InspectIceberg(ctx, env.Bucket(), env.BucketName(), st.Name, key)
	}
	if err != nil {
		code, pos := plan.CodeOf(err), st.LocationPos
		switch code {
		case "":
			code = planner.CodeBadLocation
		case planner.CodeBadOption:
			pos = st.SchemaPos
		}
		return nil, &planner.Error{Code: code, Pos: pos, Msg: err.Error()}
	}
	t.External = true
	if err := cat.Put(ctx, t); err != nil {
		return nil, err
	}
	return status("created external table %s: %d columns, %d files, %s rows", t.Name, len(t.Columns), len(t.Files), t.RowsText()), nil
}

// runQuery plans the query of st (so that its errors point into st) and
// runs it to the end.
// runQuery runs the statement's query as a job (EXPLAIN ANALYZE).
func (p *Session) runQuery(ctx context.Context, st *planner.Statement, env *coordinator.StatementEnv) (*coordinator.JobStatus, error) {
	js, err := env.Run(ctx, st.Query)
	if err != nil {
		return nil, err
	}
	return js, succeeded(js)
}

// succeeded is nil for a succeeded job, else its failure (with its code).
func succeeded(js *coordinator.JobStatus) error {
	if js.State == coordinator.StateSucceeded {
		return nil
	}
	err := fmt.Errorf("job %s %s: %s", js.ID, js.State, js.Error)
	if js.Code != "" {
		err = plan.WithCode(js.Code, err)
	}
	return err
}

// runWrite plans the statement's query, makes its result stage write the
// rows as files of format under prefix (plan.Graph.AddWrite: one file per
// result-stage task, written in parallel by the tasks themselves), runs it
// as a job and commits the files it wrote.
func (p *Session) runWrite(ctx context.Context, st *planner.Statement, env *coordinator.StatementEnv, wr plan.Write) (*coordinator.Written, error) {
	pl, err := planner.Plan(ctx, st.Query, p.Catalog, p.Options)
	if err != nil {
		return nil, st.QueryError(err)
	}
	if st.Kind == planner.StmtCreateTableAs {
		seen := map[string]bool{}
		for _, c := range pl.Graph.Columns {
			if seen[strings.ToLower(c)] {
				return nil, &planner.Error{Code: planner.CodeAmbiguous, Pos: st.NamePos,
					Msg: fmt.Sprintf("CREATE TABLE AS: the query has two columns named %s; give them distinct aliases", c)}
			}
			seen[strings.ToLower(c)] = true
		}
	}
	g := pl.Graph
	res := g.Stage(g.Result).Root.Schema
	fields := make([]arrow.Field, len(res))
	for i, f := range res.Arrow().Fields() {
		f.Name = g.Columns[i]
		fields[i] = f
	}
	if len(wr.PartitionBy) > 0 {
		cw := wr
		cw.Columns = g.Columns
		if err := cw.CheckPartitionBy(); err != nil {
			return nil, &planner.Error{Code: planner.CodeBadOption, Pos: st.LocationPos, Msg: "COPY: " + err.Error()}
		}
	}
	if err := g.AddWrite(wr); err != nil {
		return nil, err
	}
	js, err := env.RunGraph(ctx, st.Query, g, planner.Explain(pl))
	if err != nil {
		return nil, err
	}
	if err := succeeded(js); err != nil {
		return nil, err
	}
	return env.CommitWritten(ctx, js.ID, &wr, arrow.NewSchema(fields, nil))
}

func (p *Session) createTableAs(ctx context.Context, cat *catalog.Store, st *planner.Statement, env *coordinator.StatementEnv) (*coordinator.StatementResult, error) {
	if err := checkName(st); err != nil {
		return nil, err
	}
	if ok, err := p.exists(ctx, cat, st); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return status("table %s exists, not created", st.Name), nil
	}
	prefix := env.Key("tables/" + st.Name + "/")
	if err := p.writeTarget(ctx, cat, env, prefix, env.InternalPrefixes(), "CREATE TABLE "+st.Name, st.NamePos); err != nil {
		return nil, err
	}
	// Every CTAS writes files of its own job id; files of an earlier table
	// of the same name (dropped, its files left) are not this table's.
	w, err := p.runWrite(ctx, st, env, plan.Write{Format: "parquet", Prefix: prefix})
	if err != nil {
		return nil, err
	}
	t, err := catalog.Inspect(ctx, env.Bucket(), st.Name, prefix)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, k := range w.Keys {
		keep[k] = true
	}
	files := t.Files[:0]
	t.Rows, t.Bytes = 0, 0
	for _, f := range t.Files {
		if keep[f.Key] {
			files = append(files, f)
			t.Bytes += f.Size
			for _, rg := range f.RowGroups {
				t.Rows += rg.Rows
			}
		}
	}
	t.Files = files
	if err := cat.Put(ctx, t); err != nil {
		return nil, err
	}
	return status("created table %s: %d rows in %d files at %s", st.Name, w.Rows, len(w.Keys), p.s3URL(env, prefix)), nil
}

func (p *Session) copyTo(ctx context.Context, cat *catalog.Store, st *planner.Statement, env *coordinator.StatementEnv) (*coordinator.StatementResult, error) {
	key, err := location(st, env)
	if err != nil {
		return nil, err
	}
	badOption := func(format string, args ...any) error {
		return &planner.Error{Code: planner.CodeBadOption, Pos: st.LocationPos, Msg: "COPY: " + fmt.Sprintf(format, args...)}
	}
	wr := plan.Write{Format: st.Format}
	// A target that names a file (…/out.parquet, …/out.csv.gz) is that one
	// file, of the format its extension names unless FORMAT says; any
	// other target is a folder of files.
	if ext, compressed := objstore.DataExt(key); key != "" && !strings.HasSuffix(key, "/") && (ext == ".parquet" || ext == ".csv" || ext == ".json" || ext == ".ndjson" || ext == ".jsonl") {
		wr.File = key
		if _, given := st.Options["format"]; !given {
			wr.Format = strings.TrimPrefix(ext, ".")
			if wr.Format == "ndjson" || wr.Format == "jsonl" {
				wr.Format = "json"
			}
		}
		if compressed {
			wr.Compression = string(objstore.CompressionOf(key))
		}
	} else if key != "" && !strings.HasSuffix(key, "/") {
		key += "/"
	}
	wr.Prefix = key
	if wr.File != "" {
		wr.Prefix = key[:strings.LastIndex(key, "/")+1]
	}
	var overwrite, appendTo bool
	flag := func(k, v string) (bool, error) {
		switch strings.ToLower(v) {
		case "true", "1", "yes", "on":
			return true, nil
		case "false", "0", "no", "off":
			return false, nil
		}
		return false, badOption("option %s %q: want true or false", k, v)
	}
	for k, v := range st.Options {
		switch k {
		case "format":
		case "partition_by":
			for _, c := range strings.Split(v, ",") {
				wr.PartitionBy = append(wr.PartitionBy, strings.TrimSpace(c))
			}
		case "overwrite", "overwrite_or_ignore":
			if overwrite, err = flag(k, v); err != nil {
				return nil, err
			}
		case "append":
			if appendTo, err = flag(k, v); err != nil {
				return nil, err
			}
		case "header":
			h, err := flag(k, v)
			if err != nil {
				return nil, err
			}
			wr.NoHeader = !h
		case "delimiter", "delim", "sep":
			wr.Delimiter = v
		case "quote":
			wr.Quote = v
		case "null", "nullstr":
			wr.Null = v
		case "compression", "codec":
			c := strings.ToLower(v)
			switch c {
			case "gz":
				c = "gzip"
			case "zst":
				c = "zstd"
			case "none":
				c = ""
				if wr.Format == "parquet" {
					c = "uncompressed"
				}
			}
			if wr.File != "" && wr.Format != "parquet" && c != wr.Compression {
				return nil, badOption("COMPRESSION %s, but the target file %q says %q: name the file .%s%s", v, st.Location, wr.Compression, wr.Format, map[string]string{"gzip": ".gz", "zstd": ".zst"}[c])
			}
			wr.Compression = c
		default:
			return nil, badOption("unknown option %q (known: format, header, delimiter, quote, null, compression, partition_by, overwrite, append)", k)
		}
	}
	if overwrite && appendTo {
		return nil, badOption("OVERWRITE and APPEND exclude each other")
	}
	if wr.File != "" && len(wr.PartitionBy) > 0 {
		return nil, badOption("PARTITION_BY to the file %q: a partitioned COPY writes key=value folders; end the target with '/'", st.Location)
	}
	if wr.File != "" && appendTo {
		return nil, badOption("APPEND to the file %q: a file cannot take more rows; write to a folder ('…/') to add files beside others", st.Location)
	}
	if err := wr.Check(); err != nil {
		return nil, badOption("%v", err)
	}
	// COPY writes only where nothing of sluice's or of a table is: not
	// into jobs' folders, CREATE TABLE AS tables' or any registered
	// table's location.
	reserved := append(env.InternalPrefixes(), env.Key("tables/"))
	if err := p.writeTarget(ctx, cat, env, key, reserved, fmt.Sprintf("COPY target %q", st.Location), st.LocationPos); err != nil {
		return nil, err
	}
	// A target that holds files is refused unless the statement says
	// what to do with them: OVERWRITE (the new files and their marker
	// first, then the old objects go; a file is replaced by its one PUT)
	// or APPEND (they stay, and readers of the folder see both).
	var old []objstore.ObjectInfo
	if wr.File != "" {
		o, err := env.Bucket().Stat(ctx, key)
		switch {
		case err == nil:
			old = []objstore.ObjectInfo{o}
		case !errors.Is(err, objstore.ErrNotFound):
			return nil, fmt.Errorf("COPY target %s: %w", p.s3URL(env, key), err)
		}
	} else if old, err = env.Bucket().List(ctx, key); err != nil {
		return nil, fmt.Errorf("COPY target %s: %w", p.s3URL(env, key), err)
	}
	if len(old) > 0 && !overwrite && !appendTo {
		return nil, &planner.Error{Code: planner.CodeBadLocation, Pos: st.LocationPos,
			Msg: fmt.Sprintf("COPY target %q holds %d objects (such as %s): add (OVERWRITE) to replace them or (APPEND) to add files beside them", st.Location, len(old), old[0].Key)}
	}
	w, err := p.runWrite(ctx, st, env, wr)
	if err != nil {
		return nil, err
	}
	if overwrite && len(old) > 0 && wr.File == "" {
		keep := map[string]bool{}
		for _, k := range w.Keys {
			keep[k] = true
		}
		var gone []string
		for _, o := range old {
			if !keep[o.Key] {
				gone = append(gone, o.Key)
			}
		}
		if err := env.Bucket().Delete(ctx, gone...); err != nil {
			return nil, fmt.Errorf("COPY (OVERWRITE): the new files are committed, but removing the old objects failed: %w", err)
		}
	}
	rs := newResultSet("rows:int", "files:int", "location")
	rs.add(w.Rows, int64(len(w.Keys)), p.s3URL(env, key))
	return rs.result(), nil
}

// insertInto appends the rows of a query to a table: the query's columns,
// cast to the table's types in order, are written as new files under the
// table's location by the result stage's tasks and committed with a marker
// (the commit protocol of CTAS and COPY), so readers see all of them or
// none; then the catalog entry gains the new files. Tables whose new files
// would be read differently from the old (hive partitions, CSV dialects
// other than the writer's, JSON, a single-file location) are refused.
func (p *Session) insertInto(ctx context.Context, cat *catalog.Store, st *planner.Statement, env *coordinator.StatementEnv) (*coordinator.StatementResult, error) {
	t, err := cat.Get(ctx, st.Name)
	if err != nil {
		return nil, unknownTable(st, err)
	}
	refuse := func(why string) error {
		return &planner.Error{Code: planner.CodeUnsupported, Pos: st.NamePos, Msg: fmt.Sprintf("unsupported: INSERT INTO %s: %s", t.Name, why)}
	}
	if t.View != "" {
		return nil, &planner.Error{Code: planner.CodeWrongKind, Pos: st.NamePos, Msg: fmt.Sprintf("INSERT INTO %s: %s is a view; insert into the tables it reads", t.Name, t.Name)}
	}
	switch {
	case t.Format == "iceberg":
		return nil, refuse("an Iceberg table (sluice reads Iceberg tables; writing them is not supported)")
	case len(t.Partitions) > 0:
		return nil, refuse("a hive-partitioned table (its rows belong in key=value folders)")
	case t.Format == "json":
		return nil, refuse("a JSON table (sluice writes Parquet and CSV files)")
	case t.Format == "csv" && (t.CSV == nil || !t.CSV.Header || (t.CSV.Delimiter != "" && t.CSV.Delimiter != ",") || len(t.CSV.DateFormats) > 0 ||
		t.CSV.Null != "" || t.CSV.Quote != "" || t.CSV.Escape != "" || t.CSV.Skip > 0):
		return nil, refuse("a CSV table without a header row, with a delimiter other than ',', non-ISO dates, or other non-default OPTIONS (new files would be written in another dialect)")
	case !strings.HasSuffix(t.Location, "/"):
		return nil, refuse("a table of one file (its location names a file, not a folder of files)")
	}
	for _, r := range env.InternalPrefixes() {
		if strings.HasPrefix(t.Location, r) {
			return nil, refuse("its location is inside sluice's own data")
		}
	}
	pl, err := planner.Plan(ctx, st.Query, p.Catalog, p.Options)
	if err != nil {
		return nil, st.QueryError(err)
	}
	if got := len(pl.Graph.Columns); got != len(t.Columns) {
		names := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			names[i] = c.Name
		}
		return nil, &planner.Error{Code: planner.CodeType, Pos: st.QueryOffset + 1,
			Msg: fmt.Sprintf("INSERT INTO %s: the query gives %d columns, the table has %d (%s)", t.Name, got, len(t.Columns), strings.Join(names, ", "))}
	}
	// The written query: each column cast to the table's type and named
	// as the table's column, over the query as a derived table.
	var b strings.Builder
	b.WriteString("SELECT ")
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "CAST(%s AS %s) AS %s", quoteIdent(fmt.Sprintf("_sluice_c%d", i)), c.Type.SQLName(), quoteIdent(c.Name))
	}
	b.WriteString(" FROM (" + st.Query + ") AS _sluice_insert(")
	for i := range t.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(fmt.Sprintf("_sluice_c%d", i)))
	}
	b.WriteString(")")
	w := *st
	w.Query, w.QueryOffset = b.String(), 0
	if _, err := planner.Plan(ctx, w.Query, p.Catalog, p.Options); err != nil {
		// The query planned: what fails is a cast to a column's type.
		return nil, &planner.Error{Code: planner.CodeType, Pos: st.QueryOffset + 1,
			Msg: fmt.Sprintf("INSERT INTO %s: the query's columns do not cast to the table's types: %v", t.Name, err)}
	}
	written, err := p.runWrite(ctx, &w, env, plan.Write{Format: t.Format, Prefix: t.Location})
	if err != nil {
		return nil, err
	}
	if err := p.addFiles(ctx, cat, env, t, written.Keys); err != nil {
		return nil, err
	}
	rs := newResultSet("rows:int", "files:int", "table")
	rs.add(written.Rows, int64(len(written.Keys)), t.Name)
	return rs.result(), nil
}

// addFiles adds the committed files keys, written under t's location, to
// t's catalog entry (a footer read each for Parquet, an estimate from the
// table's bytes per row for CSV).
func (p *Session) addFiles(ctx context.Context, cat *catalog.Store, env *coordinator.StatementEnv, t *catalog.Table, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	var fresh *catalog.Table
	var err error
	if t.Format == "parquet" {
		fresh, err = catalog.Inspect(ctx, env.Bucket(), t.Name, t.Location)
	} else {
		fresh, err = catalog.InspectCSV(ctx, env.Bucket(), t.Name, t.Location, catalog.CSVOptions{Header: true})
	}
	if err != nil {
		return err
	}
	add := map[string]bool{}
	for _, k := range keys {
		add[k] = true
	}
	for _, f := range fresh.Files {
		if add[f.Key] {
			t.Files = append(t.Files, f)
			t.Bytes += f.Size
			for _, rg := range f.RowGroups {
				t.Rows += rg.Rows
			}
		}
	}
	return cat.Put(ctx, t)
}

// quoteIdent quotes a name as a SQL identifier.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func (p *Session) explain(ctx context.Context, st *planner.Statement, env *coordinator.StatementEnv) (*coordinator.StatementResult, error) {
	pl, err := planner.Plan(ctx, st.Query, p.Catalog, p.Options)
	if err != nil {
		return nil, st.QueryError(err)
	}
	text := planner.Explain(pl)
	if tables, ok := p.Catalog.(coordinator.Tables); ok {
		pruning, err := coordinator.ExplainPruning(ctx, tables, pl.Graph)
		if err != nil {
			return nil, err
		}
		text += pruning
	}
	if st.Analyze {
		js, err := p.runQuery(ctx, st, env)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "job %s: %s\n%s\n== stage metrics\n", js.ID, js.State, js.Explain)
		for _, s := range js.Stages {
			fmt.Fprintf(&b, "Stage %d [%s] tasks=%d input_rows=%d input_bytes=%d output_rows=%d output_bytes=%d elapsed=%.3fs",
				s.ID, s.Output, s.Tasks, s.InputRows, s.InputBytes, s.Rows, s.Bytes, s.Seconds)
			if s.FilesPruned > 0 {
				fmt.Fprintf(&b, " files_pruned=%d", s.FilesPruned)
			}
			if s.RowGroupsPruned > 0 {
				fmt.Fprintf(&b, " row_groups_pruned=%d", s.RowGroupsPruned)
			}
			if s.RowGroupsFromStats > 0 {
				fmt.Fprintf(&b, " row_groups_from_stats=%d", s.RowGroupsFromStats)
			}
			b.WriteByte('\n')
		}
		if len(js.Rounds) > 0 {
			b.WriteString("== adaptive rounds\n")
			WriteRoundNotes(&b, js, "")
		}
		WriteOperatorMetrics(&b, js)
		text = b.String()
	}
	rs := newResultSet("plan")
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		rs.add(line)
	}
	return rs.result(), nil
}

// status is a one-row result saying what a statement did.
func status(format string, args ...any) *coordinator.StatementResult {
	rs := newResultSet("status")
	rs.add(fmt.Sprintf(format, args...))
	return rs.result()
}

// resultSet builds a small result of string and int64 columns (a name
// ending in ":int" is an int64 column).
type resultSet struct {
	schema *arrow.Schema
	b      *array.RecordBuilder
	rows   int
}

func newResultSet(cols ...string) *resultSet {
	fs := make([]arrow.Field, len(cols))
	for i, c := range cols {
		if n, ok := strings.CutSuffix(c, ":int"); ok {
			fs[i] = arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Int64}
		} else {
			fs[i] = arrow.Field{Name: c, Type: arrow.BinaryTypes.String}
		}
	}
	s := arrow.NewSchema(fs, nil)
	return &resultSet{schema: s, b: array.NewRecordBuilder(memory.DefaultAllocator, s)}
}

func (r *resultSet) add(vals ...any) {
	for i, v := range vals {
		switch v := v.(type) {
		case string:
			r.b.Field(i).(*array.StringBuilder).Append(v)
		case int64:
			r.b.Field(i).(*array.Int64Builder).Append(v)
		case nil:
			r.b.Field(i).AppendNull()
		default:
			if sb, ok := r.b.Field(i).(*array.StringBuilder); ok {
				sb.Append(fmt.Sprint(v))
			} else {
				r.b.Field(i).AppendNull()
			}
		}
	}
	r.rows++
}

func (r *resultSet) result() *coordinator.StatementResult {
	defer r.b.Release()
	rec := r.b.NewRecordBatch()
	return &coordinator.StatementResult{Schema: r.schema, Records: []arrow.RecordBatch{rec}}
}
