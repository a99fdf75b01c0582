package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"
	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v2"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/planner/catalog"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

func tablesCommand() *cli.Command {
	redisFlag := &cli.StringFlag{Name: "redis", EnvVars: []string{"SLUICE_REDIS_URL"}, Usage: "Redis URL of the catalog (only without --coordinator)"}
	apiFlags := []cli.Flag{
		&cli.StringFlag{Name: "coordinator", EnvVars: []string{"SLUICE_COORDINATOR"}, Usage: "coordinator API URL: the command runs as SQL statements there (preferred)"},
		&cli.StringFlag{Name: "token", EnvVars: []string{"SLUICE_TOKEN"}, Usage: "bearer token of the coordinator API"},
	}
	// viaAPI runs the command as one SQL statement on the coordinator
	// when one is given: the tables commands are then thin clients of
	// POST /v1/statements, like the shell.
	viaAPI := func(c *cli.Context, sql string) (bool, error) {
		if c.String("coordinator") == "" {
			if c.String("redis") == "" {
				return true, errors.New("give --coordinator (or SLUICE_COORDINATOR), or --redis for the catalog itself")
			}
			return false, nil
		}
		cl := coordinator.NewClient(httpEndpoint(c.String("coordinator")), c.String("token"))
		return true, execQuery(c.Context, cl, sql, queryOpts{format: "table", quiet: true}, os.Stdout, os.Stderr)
	}
	openCatalog := func(c *cli.Context) (*catalog.Store, func(), error) {
		o, err := redis.ParseURL(c.String("redis"))
		if err != nil {
			return nil, nil, fmt.Errorf("redis URL: %w", err)
		}
		rdb := redis.NewClient(o)
		if err := rdb.Ping(c.Context).Err(); err != nil {
			rdb.Close()
			return nil, nil, fmt.Errorf("redis at %s unreachable: %w", o.Addr, err)
		}
		return catalog.NewStore(rdb), func() { rdb.Close() }, nil
	}
	return &cli.Command{
		Name:  "tables",
		Usage: "register and inspect tables (files already in a bucket)",
		Subcommands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "register the files under an S3 prefix as a table",
				ArgsUsage: "NAME s3://BUCKET/PREFIX/",
				Flags: append([]cli.Flag{redisFlag,
					&cli.StringFlag{Name: "s3-endpoint", EnvVars: []string{"SLUICE_S3_ENDPOINT"}, Usage: s3EndpointUsage},
					&cli.StringFlag{Name: "bucket", EnvVars: []string{"SLUICE_S3_BUCKET"}, Value: "sluice", Usage: "the bucket sluice runs on"},
					&cli.StringFlag{Name: "format", Value: "parquet", Usage: "parquet or csv"},
					&cli.StringFlag{Name: "schema", Usage: `CSV columns, e.g. "id bigint, name varchar, price decimal(15,2), day date" (default: header names, types inferred)`},
					&cli.BoolFlag{Name: "header", Value: true, Usage: "CSV files start with a header row"},
					&cli.StringFlag{Name: "delimiter", Value: ",", Usage: "CSV field separator"},
				}, apiFlags...),
				Action: func(c *cli.Context) error {
					if c.NArg() != 2 {
						return errors.New("usage: sluice tables add NAME s3://BUCKET/PREFIX/")
					}
					if done, err := viaAPI(c, createExternalSQL(c)); done {
						return err
					}
					name := c.Args().Get(0)
					u, err := url.Parse(c.Args().Get(1))
					if err != nil || u.Scheme != "s3" || u.Host == "" {
						return fmt.Errorf("location %q: want s3://BUCKET/PREFIX/", c.Args().Get(1))
					}
					cfg := objstore.S3ConfigFromEnv()
					if e := c.String("s3-endpoint"); e != "" {
						cfg.Endpoint = e
					}
					if cfg.Endpoint == "" {
						return errors.New("no S3 endpoint: set --s3-endpoint or SLUICE_S3_ENDPOINT")
					}
					if want := c.String("bucket"); u.Host != want {
						return fmt.Errorf("table files must be in the bucket sluice runs on (%q, set by --bucket / SLUICE_S3_BUCKET), not %q", want, u.Host)
					}
					cfg.Bucket = u.Host
					b, err := objstore.Open(c.Context, objstore.Config{Backend: objstore.BackendS3, S3: cfg})
					if err != nil {
						return err
					}
					prefix := strings.TrimPrefix(u.Path, "/")
					var t *catalog.Table
					switch c.String("format") {
					case "parquet":
						t, err = catalog.Inspect(c.Context, b, name, prefix)
					case "csv":
						opts := catalog.CSVOptions{Header: c.Bool("header")}
						if d := []rune(c.String("delimiter")); len(d) == 1 {
							opts.Delimiter = d[0]
						} else {
							return fmt.Errorf("--delimiter must be one character, got %q", c.String("delimiter"))
						}
						if s := c.String("schema"); s != "" {
							if opts.Schema, err = catalog.ParseSchema(s); err != nil {
								return err
							}
						}
						t, err = catalog.InspectCSV(c.Context, b, name, prefix, opts)
					default:
						return fmt.Errorf("--format %q: want parquet or csv", c.String("format"))
					}
					if err != nil {
						return err
					}
					cat, done, err := openCatalog(c)
					if err != nil {
						return err
					}
					defer done()
					if err := cat.Put(c.Context, t); err != nil {
						return err
					}
					fmt.Printf("table %s: %d columns, %d files, %s rows, %s\n", t.Name, len(t.Columns), len(t.Files), t.RowsText(), humanize.IBytes(uint64(t.Bytes)))
					if w := t.SkippedText(); w != "" {
						fmt.Fprintln(os.Stderr, "warning: "+w)
					}
					return nil
				},
			},
			{
				Name:  "ls",
				Usage: "list registered tables",
				Flags: append([]cli.Flag{redisFlag}, apiFlags...),
				Action: func(c *cli.Context) error {
					if done, err := viaAPI(c, "SHOW TABLES"); done {
						return err
					}
					cat, done, err := openCatalog(c)
					if err != nil {
						return err
					}
					defer done()
					ts, err := cat.List(c.Context)
					if err != nil {
						return err
					}
					tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "TABLE\tFORMAT\tCOLUMNS\tFILES\tROWS\tBYTES\tLOCATION")
					for _, t := range ts {
						fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", t.Name, t.Format, len(t.Columns), len(t.Files), t.Rows, humanize.IBytes(uint64(t.Bytes)), t.Location)
					}
					return tw.Flush()
				},
			},
			{
				Name:      "show",
				Usage:     "a table's schema, files, rows and bytes",
				ArgsUsage: "NAME",
				Flags:     append([]cli.Flag{redisFlag}, apiFlags...),
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return errors.New("usage: sluice tables show NAME")
					}
					if done, err := viaAPI(c, "DESCRIBE "+quoteIdent(c.Args().First())); done {
						return err
					}
					cat, done, err := openCatalog(c)
					if err != nil {
						return err
					}
					defer done()
					t, err := cat.Get(c.Context, c.Args().First())
					if err != nil {
						return err
					}
					fmt.Printf("table %s (%s) at %s: %d rows, %s in %d files\n\n", t.Name, t.Format, t.Location, t.Rows, humanize.IBytes(uint64(t.Bytes)), len(t.Files))
					tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "COLUMN\tTYPE")
					for _, col := range t.Columns {
						fmt.Fprintf(tw, "%s\t%s\n", col.Name, col.Type)
					}
					fmt.Fprintln(tw, "\nFILE\tBYTES\tROW GROUPS\tROWS")
					for _, f := range t.Files {
						var rows int64
						for _, rg := range f.RowGroups {
							rows += rg.Rows
						}
						fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", f.Key, f.Size, len(f.RowGroups), rows)
					}
					return tw.Flush()
				},
			},
			{
				Name:      "drop",
				Usage:     "remove a table from the catalog (its files stay)",
				ArgsUsage: "NAME",
				Flags:     append([]cli.Flag{redisFlag, &cli.BoolFlag{Name: "if-exists", Usage: "no error when the table does not exist"}}, apiFlags...),
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return errors.New("usage: sluice tables drop NAME")
					}
					ifExists := ""
					if c.Bool("if-exists") {
						ifExists = "IF EXISTS "
					}
					if done, err := viaAPI(c, "DROP TABLE "+ifExists+quoteIdent(c.Args().First())); done {
						return err
					}
					cat, done, err := openCatalog(c)
					if err != nil {
						return err
					}
					defer done()
					return cat.Drop(c.Context, strings.ToLower(c.Args().First()))
				},
			},
		},
	}
}

// createExternalSQL is the CREATE EXTERNAL TABLE statement of `tables add`.
func createExternalSQL(c *cli.Context) string {
	var b strings.Builder
	b.WriteString("CREATE EXTERNAL TABLE " + quoteIdent(c.Args().Get(0)))
	if s := c.String("schema"); s != "" {
		b.WriteString(" (" + s + ")")
	}
	b.WriteString(" STORED AS " + strings.ToUpper(c.String("format")) + " LOCATION " + quoteString(c.Args().Get(1)))
	if strings.EqualFold(c.String("format"), "csv") {
		fmt.Fprintf(&b, " OPTIONS (header '%v', delimiter %s)", c.Bool("header"), quoteString(c.String("delimiter")))
	}
	return b.String()
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
