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

	"github.com/sluicedb/sluice/planner/catalog"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

func tablesCommand() *cli.Command {
	redisFlag := &cli.StringFlag{Name: "redis", EnvVars: []string{"SLUICE_REDIS_URL"}, Required: true, Usage: "Redis URL of the catalog"}
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
				Flags: []cli.Flag{redisFlag,
					&cli.StringFlag{Name: "s3-endpoint", EnvVars: []string{"SLUICE_S3_ENDPOINT"}, Usage: "S3 endpoint host:port"},
					&cli.StringFlag{Name: "bucket", EnvVars: []string{"SLUICE_S3_BUCKET"}, Value: "sluice", Usage: "the bucket sluice runs on"},
					&cli.StringFlag{Name: "format", Value: "parquet", Usage: "parquet or csv"},
					&cli.StringFlag{Name: "schema", Usage: `CSV columns, e.g. "id bigint, name varchar, price decimal(15,2), day date" (default: header names, types inferred)`},
					&cli.BoolFlag{Name: "header", Value: true, Usage: "CSV files start with a header row"},
					&cli.StringFlag{Name: "delimiter", Value: ",", Usage: "CSV field separator"},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() != 2 {
						return errors.New("usage: sluice tables add NAME s3://BUCKET/PREFIX/")
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
					b, err := objstore.NewS3(c.Context, cfg)
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
					fmt.Printf("table %s: %d columns, %d files, %d rows, %s\n", t.Name, len(t.Columns), len(t.Files), t.Rows, humanize.IBytes(uint64(t.Bytes)))
					return nil
				},
			},
			{
				Name:  "ls",
				Usage: "list registered tables",
				Flags: []cli.Flag{redisFlag},
				Action: func(c *cli.Context) error {
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
				Flags:     []cli.Flag{redisFlag},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return errors.New("usage: sluice tables show NAME")
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
		},
	}
}
