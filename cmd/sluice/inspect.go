package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/urfave/cli/v2"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

func coordinatorFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "coordinator", EnvVars: []string{"SLUICE_COORDINATOR"}, Required: true, Usage: "coordinator API URL"},
		&cli.StringFlag{Name: "token", EnvVars: []string{"SLUICE_TOKEN"}, Usage: "bearer token of the coordinator API"},
	}
}

func jobsCommand() *cli.Command {
	client := func(c *cli.Context) *coordinator.Client {
		return coordinator.NewClient(httpEndpoint(c.String("coordinator")), c.String("token"))
	}
	return &cli.Command{
		Name:  "jobs",
		Usage: "list, show and cancel jobs",
		Subcommands: []*cli.Command{
			{Name: "ls", Flags: coordinatorFlags(), Action: func(c *cli.Context) error {
				ids, err := client(c).Jobs(c.Context)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "JOB\tSTATE\tCREATED\tOWNER\tATTEMPTS\tRETRIES\tSQL")
				for _, id := range ids {
					js, err := client(c).Status(c.Context, id)
					if err != nil {
						return err
					}
					sql := strings.Join(strings.Fields(js.SQL), " ")
					if len(sql) > 60 {
						sql = sql[:57] + "..."
					}
					attempts, retries := jobAttempts(js)
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\n", id, js.State, js.Created, ownerText(js), attempts, retries, sql)
				}
				return tw.Flush()
			}},
			{Name: "show", ArgsUsage: "JOB", Flags: append(coordinatorFlags(), &cli.BoolFlag{Name: "json"}), Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return errors.New("usage: sluice jobs show JOB")
				}
				if c.Bool("json") {
					// The web UI's view of the job (GET /v1/jobs/{id}/detail).
					d, err := client(c).Detail(c.Context, c.Args().First())
					if err != nil {
						return err
					}
					enc := json.NewEncoder(os.Stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(d)
				}
				js, err := client(c).Status(c.Context, c.Args().First())
				if err != nil {
					return err
				}
				printStats(os.Stdout, js)
				printAttempts(os.Stdout, js)
				if js.Error != "" {
					fmt.Printf("error: %s\n", js.Error)
				}
				return nil
			}},
			{Name: "cancel", ArgsUsage: "JOB", Flags: coordinatorFlags(), Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return errors.New("usage: sluice jobs cancel JOB")
				}
				return client(c).Cancel(c.Context, c.Args().First())
			}},
		},
	}
}

func s3Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "s3-endpoint", EnvVars: []string{"SLUICE_S3_ENDPOINT"}, Usage: s3EndpointUsage},
		&cli.StringFlag{Name: "bucket", EnvVars: []string{"SLUICE_S3_BUCKET"}, Value: "sluice"},
		&cli.StringFlag{Name: "prefix", EnvVars: []string{"SLUICE_PREFIX"}, Usage: "key prefix of sluice's objects"},
	}
}

func openBucket(c *cli.Context) (objstore.Bucket, error) {
	cfg := objstore.ConfigFromEnv()
	if e := c.String("s3-endpoint"); e != "" {
		cfg.S3.Endpoint = e
	}
	cfg.S3.Bucket = c.String("bucket")
	if cfg.S3.Endpoint == "" {
		return nil, errors.New("no S3 endpoint: set --s3-endpoint or SLUICE_S3_ENDPOINT (sluice local start prints it)")
	}
	return objstore.Open(c.Context, cfg)
}

func shuffleCommand() *cli.Command {
	return &cli.Command{
		Name:  "shuffle",
		Usage: "inspect a job's shuffle objects in the bucket",
		Subcommands: []*cli.Command{
			{Name: "ls", ArgsUsage: "JOB", Usage: "list a job's shuffle objects", Flags: s3Flags(), Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return errors.New("usage: sluice shuffle ls JOB")
				}
				b, err := openBucket(c)
				if err != nil {
					return err
				}
				entries, err := shuffle.ListJob(c.Context, b, c.String("prefix"), c.Args().First())
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "STAGE\tTASK\tATTEMPT\tPART\tBYTES\tROWS\tKEY\tNOTE")
				for _, e := range entries {
					part := fmt.Sprint(e.Part)
					switch {
					case e.Manifest:
						part = "manifest"
					case e.Data:
						part = fmt.Sprintf("data (%d partitions)", e.Partitions)
					}
					fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%d\t%d\t%s\t%s\n", e.Stage, e.Task, e.Attempt, part, e.Size, e.Rows, e.Key, e.Note)
				}
				return tw.Flush()
			}},
			{Name: "stats", ArgsUsage: "JOB STAGE", Usage: "per-partition rows and bytes of a stage, rebuilt from a LIST of the bucket", Flags: s3Flags(), Action: func(c *cli.Context) error {
				if c.NArg() != 2 {
					return errors.New("usage: sluice shuffle stats JOB STAGE")
				}
				var stage int
				if _, err := fmt.Sscan(c.Args().Get(1), &stage); err != nil {
					return fmt.Errorf("stage %q is not a number", c.Args().Get(1))
				}
				b, err := openBucket(c)
				if err != nil {
					return err
				}
				st, err := shuffle.StatsFromListing(c.Context, b, c.String("prefix"), c.Args().First(), stage, nil)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "PARTITION\tROWS\tBYTES\tOBJECTS")
				for _, p := range st.Sorted() {
					fmt.Fprintf(tw, "%d\t%d\t%d\t%d\n", p.Partition, p.Rows, p.Bytes, len(p.Objects))
				}
				fmt.Fprintf(tw, "total\t%d\t%d\t\n", st.Rows, st.Bytes)
				return tw.Flush()
			}},
			{Name: "cat", ArgsUsage: "KEY", Usage: "decode an Arrow IPC shuffle object (every partition of a data object, or one with --partition) and print its rows", Flags: append(s3Flags(),
				&cli.StringFlag{Name: "format", Value: "table"},
				&cli.IntFlag{Name: "partition", Value: -1, Usage: "print only this output partition of a data object (its byte range, checked against the manifest)"}), Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return errors.New("usage: sluice shuffle cat KEY [--partition P]")
				}
				key := c.Args().First()
				if p := c.Int("partition"); p >= 0 {
					if k, err := shuffle.ParseKey(key); err != nil || !k.Data {
						return fmt.Errorf("--partition needs the key of a %s data object, not %q", shuffle.DataName, key)
					}
					key = fmt.Sprintf("%s#%d", key, p) // a partition ID, as shuffle.ObjectRef.ID builds it
				}
				b, err := openBucket(c)
				if err != nil {
					return err
				}
				var recs []arrow.RecordBatch
				var schema *arrow.Schema
				err = shuffle.Cat(c.Context, b, key, func(rec arrow.RecordBatch) error {
					rec.Retain()
					recs = append(recs, rec)
					schema = rec.Schema()
					return nil
				})
				defer func() {
					for _, r := range recs {
						r.Release()
					}
				}()
				if err != nil {
					return err
				}
				if schema == nil {
					fmt.Println("(empty object)")
					return nil
				}
				return writeResult(os.Stdout, c.String("format"), schema, recs)
			}},
		},
	}
}
