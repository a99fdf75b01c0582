package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

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
			{Name: "ls", Usage: "the jobs, newest first: state, when created, how long they ran, the SQL",
				Flags: append(coordinatorFlags(),
					&cli.StringFlag{Name: "state", Usage: "only jobs in these states (comma-separated: running, succeeded, failed, cancelled)"},
					&cli.IntFlag{Name: "limit", Value: 50, Usage: "at most this many jobs (0: all)"}),
				Action: func(c *cli.Context) error {
					want := map[coordinator.JobState]bool{}
					for _, st := range strings.Split(c.String("state"), ",") {
						st = strings.ToLower(strings.TrimSpace(st))
						if st == "" {
							continue
						}
						switch js := coordinator.JobState(st); js {
						case coordinator.StateRunning, coordinator.StateQueued, coordinator.StateSucceeded, coordinator.StateFailed, coordinator.StateCancelled:
							want[js] = true
						default:
							return fmt.Errorf("--state %q: want running, queued, succeeded, failed or cancelled", st)
						}
					}
					ids, err := client(c).Jobs(c.Context)
					if err != nil {
						return err
					}
					var jobs []*coordinator.JobStatus
					for _, id := range ids {
						js, err := client(c).Status(c.Context, id)
						if err != nil {
							return err
						}
						if len(want) == 0 || want[js.State] {
							jobs = append(jobs, js)
						}
					}
					sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].Created > jobs[j].Created })
					more := 0
					if n := c.Int("limit"); n > 0 && len(jobs) > n {
						more, jobs = len(jobs)-n, jobs[:n]
					}
					now := time.Now()
					tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "JOB\tSTATE\tCREATED\tDURATION\tOWNER\tATTEMPTS\tRETRIES\tSQL")
					for _, js := range jobs {
						sql := strings.Join(strings.Fields(js.SQL), " ")
						if r := []rune(sql); len(r) > 60 {
							sql = string(r[:57]) + "..."
						}
						attempts, retries := jobAttempts(js)
						created, took := jobTimes(js, now)
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", js.ID, js.State, created, took, ownerText(js), attempts, retries, sql)
					}
					if err := tw.Flush(); err != nil {
						return err
					}
					if more > 0 {
						fmt.Fprintf(os.Stderr, "(%d older jobs not shown: --limit 0 shows all)\n", more)
					}
					return nil
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
				job := c.Args().First()
				js, err := client(c).Status(c.Context, job)
				if err != nil {
					return err
				}
				if js.State.Terminal() {
					fmt.Printf("job %s already %s: nothing to cancel\n", job, js.State)
					return nil
				}
				done := 0
				for _, st := range js.Stages {
					if st.State == coordinator.StageDone || st.State == coordinator.StageSkipped {
						done++
					}
				}
				if err := client(c).Cancel(c.Context, job); err != nil {
					return err
				}
				// The coordinator driving the job sees the request at its next
				// step; wait a little for the job to say it stopped.
				wctx, cancel := context.WithTimeout(c.Context, 5*time.Second)
				defer cancel()
				final, err := client(c).Wait(wctx, job, nil)
				if err == nil && final.State.Terminal() {
					fmt.Printf("job %s %s (it was %s, %d of %d stages done)\n", job, final.State, js.State, done, len(js.Stages))
					return nil
				}
				fmt.Printf("job %s cancelling (it was %s, %d of %d stages done); its running tasks stop at their next check: sluice jobs show %s\n", job, js.State, done, len(js.Stages), job)
				return nil
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
	return openBucketNamed(c, c.String("bucket"))
}

// openBucketNamed opens bucket on the endpoint the flags give.
func openBucketNamed(c *cli.Context, bucket string) (objstore.Bucket, error) {
	cfg := objstore.ConfigFromEnv()
	if e := c.String("s3-endpoint"); e != "" {
		cfg.S3.Endpoint = e
	}
	cfg.S3.Bucket = bucket
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
			{Name: "cat", ArgsUsage: "KEY|s3://BUCKET/KEY", Usage: "decode an Arrow IPC shuffle object (every partition of a data object, or one with --partition) and print its rows; a manifest is printed as it is (JSON)", Flags: append(s3Flags(),
				&cli.StringFlag{Name: "format", Value: "table"},
				&cli.IntFlag{Name: "partition", Value: -1, Usage: "print only this output partition of a data object (its byte range, checked against the manifest)"}), Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return errors.New("usage: sluice shuffle cat KEY [--partition P]")
				}
				key, bucket := c.Args().First(), c.String("bucket")
				if rest, ok := strings.CutPrefix(key, "s3://"); ok {
					// An s3:// URL, as `shuffle ls` and the web UI print them.
					var found bool
					if bucket, key, found = strings.Cut(rest, "/"); !found || key == "" {
						return fmt.Errorf("%q names no object: want s3://BUCKET/KEY", c.Args().First())
					}
				}
				if k, err := shuffle.ParseKey(key); err == nil && k.Manifest {
					b, err := openBucketNamed(c, bucket)
					if err != nil {
						return err
					}
					data, err := b.Get(c.Context, key)
					if err != nil {
						return err
					}
					var out bytes.Buffer
					if err := json.Indent(&out, data, "", "  "); err != nil {
						return fmt.Errorf("manifest %s is not JSON: %w", key, err)
					}
					fmt.Println(out.String())
					return nil
				}
				if p := c.Int("partition"); p >= 0 {
					if k, err := shuffle.ParseKey(key); err != nil || !k.Data {
						return fmt.Errorf("--partition needs the key of a %s data object, not %q", shuffle.DataName, key)
					}
					key = fmt.Sprintf("%s#%d", key, p) // a partition ID, as shuffle.ObjectRef.ID builds it
				}
				b, err := openBucketNamed(c, bucket)
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

// jobTimes renders when a job was created, for people ("2026-12-02
// 17:49:05 (3m ago)", local time), and how long it ran or has been
// running ("1.2s", "running 12s").
func jobTimes(js *coordinator.JobStatus, now time.Time) (created, took string) {
	c, err := time.Parse(time.RFC3339Nano, js.Created)
	if err != nil {
		return js.Created, ""
	}
	created = fmt.Sprintf("%s (%s ago)", c.Local().Format(time.DateTime), roundDuration(now.Sub(c)))
	if f, err := time.Parse(time.RFC3339Nano, js.Finished); err == nil && js.Finished != "" {
		return created, roundDuration(f.Sub(c)).String()
	}
	if !js.State.Terminal() {
		return created, "running " + roundDuration(now.Sub(c)).String()
	}
	return created, ""
}

// roundDuration rounds d to what a person reads: milliseconds under a
// second, tenths under a minute, whole seconds above.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < time.Minute:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
