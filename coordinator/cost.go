package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/function/redisdb"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// The cost report of a job: object store requests by verb and bytes moved
// (counted per request in the objstore layer: by each function attempt,
// which reports them in its TaskResult, and by the job's driver), function
// invocations, function-seconds and GB-seconds (invocation wall time times
// Config.FunctionMemory), and a $ estimate from a price table. Every
// attempt counts, failed and duplicate ones too: they are paid for.

// Prices is the price table of the $ estimate, in dollars.
type Prices struct {
	// S3 bills PUT, COPY, POST and LIST requests at one rate and GET and
	// the rest (HEAD) at another; DELETE is free on S3.
	S3PutPer1000    float64 `json:"s3_put_per_1000"`
	S3ListPer1000   float64 `json:"s3_list_per_1000"`
	S3GetPer1000    float64 `json:"s3_get_per_1000"`
	S3DeletePer1000 float64 `json:"s3_delete_per_1000"`
	// Lambda bills compute per GB-second and each request.
	LambdaGBSecond   float64 `json:"lambda_gb_second"`
	LambdaPerMillion float64 `json:"lambda_per_million"`
}

// DefaultPrices are AWS list prices (us-east-1, x86).
func DefaultPrices() Prices {
	return Prices{S3PutPer1000: 0.005, S3ListPer1000: 0.005, S3GetPer1000: 0.0004,
		LambdaGBSecond: 0.0000166667, LambdaPerMillion: 0.20}
}

// ParsePrices reads a price table over DefaultPrices: either the path of
// a JSON file with Prices' fields, or a list "s3_get_per_1000=0.0005,
// lambda_gb_second=0.00001" of the same names.
func ParsePrices(spec string) (Prices, error) {
	p := DefaultPrices()
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return p, nil
	}
	if !strings.Contains(spec, "=") {
		data, err := os.ReadFile(spec)
		if err != nil {
			return p, fmt.Errorf("price table: %w", err)
		}
		if err := json.Unmarshal(data, &p); err != nil {
			return p, fmt.Errorf("price table %s: %w", spec, err)
		}
		return p, nil
	}
	fields := map[string]*float64{
		"s3_put_per_1000": &p.S3PutPer1000, "s3_list_per_1000": &p.S3ListPer1000, "s3_get_per_1000": &p.S3GetPer1000,
		"s3_delete_per_1000": &p.S3DeletePer1000, "lambda_gb_second": &p.LambdaGBSecond, "lambda_per_million": &p.LambdaPerMillion,
	}
	for _, kv := range strings.Split(spec, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		dst, ok := fields[k]
		if !ok {
			return p, fmt.Errorf("price table: unknown price %q (known: s3_put_per_1000, s3_list_per_1000, s3_get_per_1000, s3_delete_per_1000, lambda_gb_second, lambda_per_million)", k)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return p, fmt.Errorf("price table: %s=%q is not a non-negative number", k, v)
		}
		*dst = f
	}
	return p, nil
}

// Cost is a job's cost report.
type Cost struct {
	S3 objstore.RequestStats `json:"s3"`
	// Invocations counts function invocations (attempts that reached a
	// function, failed ones included).
	Invocations     int64   `json:"invocations"`
	FunctionSeconds float64 `json:"function_seconds"`
	GBSeconds       float64 `json:"gb_seconds"`
	// Dollars estimates the job's cost with Prices; S3Dollars and
	// LambdaDollars are its parts.
	S3Dollars     float64 `json:"s3_dollars"`
	LambdaDollars float64 `json:"lambda_dollars"`
	Dollars       float64 `json:"dollars"`
}

// Price fills the $ estimate of c from p.
func (c *Cost) Price(p Prices) {
	s := c.S3
	c.S3Dollars = float64(s.Put+s.Other)*p.S3PutPer1000/1000 + float64(s.List)*p.S3ListPer1000/1000 +
		float64(s.Get+s.Head)*p.S3GetPer1000/1000 + float64(s.Delete)*p.S3DeletePer1000/1000
	c.LambdaDollars = c.GBSeconds*p.LambdaGBSecond + float64(c.Invocations)*p.LambdaPerMillion/1e6
	c.Dollars = c.S3Dollars + c.LambdaDollars
}

func kCost(job string) string { return redisdb.CostKey(job) }

// costFields are the job cost hash's integer fields.
var costCounters = []string{"get", "put", "list", "delete", "head", "other", "read", "written", "invocations"}

func statsValues(s objstore.RequestStats) []int64 {
	return []int64{s.Get, s.Put, s.List, s.Delete, s.Head, s.Other, s.BytesRead, s.BytesWritten}
}

// AddCost adds requests, invocations and function time to a job's cost.
// It is not fenced: whoever spent it, it was spent.
func (s *Store) AddCost(ctx context.Context, job string, s3 objstore.RequestStats, invocations int64, seconds, gbSeconds float64) error {
	vals := append(statsValues(s3), invocations)
	return s.retry(ctx, "add cost", func() error {
		p := s.rdb.TxPipeline()
		for i, f := range costCounters {
			if vals[i] != 0 {
				p.HIncrBy(ctx, kCost(job), f, vals[i])
			}
		}
		if seconds != 0 {
			p.HIncrByFloat(ctx, kCost(job), "seconds", seconds)
			p.HIncrByFloat(ctx, kCost(job), "gb_seconds", gbSeconds)
		}
		_, err := p.Exec(ctx)
		return err
	})
}

// Cost reads a job's cost (without the $ estimate; see Cost.Price).
func (s *Store) Cost(ctx context.Context, job string) (*Cost, error) {
	var m map[string]string
	err := s.retry(ctx, "read cost", func() (err error) {
		m, err = s.rdb.HGetAll(ctx, kCost(job)).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	n := func(f string) int64 { v, _ := strconv.ParseInt(m[f], 10, 64); return v }
	fl := func(f string) float64 { v, _ := strconv.ParseFloat(m[f], 64); return v }
	return &Cost{
		S3: objstore.RequestStats{Get: n("get"), Put: n("put"), List: n("list"), Delete: n("delete"), Head: n("head"),
			Other: n("other"), BytesRead: n("read"), BytesWritten: n("written")},
		Invocations: n("invocations"), FunctionSeconds: fl("seconds"), GBSeconds: fl("gb_seconds"),
	}, nil
}

// chargeAttempt records the cost of one invocation of a task attempt
// on a function of mem bytes (res nil when the invocation failed before a
// result came back).
func (c *Coordinator) chargeAttempt(ctx context.Context, job string, res *function.TaskResult, took time.Duration, mem int64) {
	var s3 objstore.RequestStats
	if res != nil && res.S3 != nil {
		s3 = *res.S3
	}
	secs := took.Seconds()
	invocations := int64(1)
	if res != nil && res.SharedInvocation {
		// Packed with other tasks: the member that counts the
		// invocation is charged its duration.
		invocations, secs = 0, 0
	}
	gbs := secs * float64(mem) / (1 << 30)
	c.metrics.addCost(s3, invocations, secs, gbs, c.cfg.Prices)
	if err := c.store.AddCost(context.WithoutCancel(ctx), job, s3, invocations, secs, gbs); err != nil {
		c.log.Warn("recording the cost of a task attempt", "job", job, "err", err)
	}
}

// chargeDriver records the object store requests the job's driver made.
func (c *Coordinator) chargeDriver(ctx context.Context, job string, s3 objstore.RequestStats) {
	if s3.Requests() == 0 {
		return
	}
	c.metrics.addCost(s3, 0, 0, 0, c.cfg.Prices)
	if err := c.store.AddCost(context.WithoutCancel(ctx), job, s3, 0, 0, 0); err != nil {
		c.log.Warn("recording the driver's requests", "job", job, "err", err)
	}
}
