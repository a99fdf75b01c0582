package sim

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// PrintReport writes one line per query and the totals.
func PrintReport(w io.Writer, rs []QueryReport) {
	fmt.Fprintf(w, "%-8s %-9s %9s %8s %6s %5s %5s %6s %6s %5s %9s %8s %8s %8s %9s %8s %7s %7s %7s %7s %7s %9s\n",
		"query", "state", "latency", "wall", "fns", "peak", "sust", "429s", "503s", "retry", "GETs", "PUTs", "pkGET/s", "pkPUT/s",
		"redis", "redis/s", "coCPU", "mdlCPU", "rdsCPU", "rdsMem", "RSS", "$")
	var t QueryReport
	t.Name, t.State = "total", "ok"
	t.LimitMin = -1
	bad := 0
	for _, r := range rs {
		line(w, r)
		if r.State != "succeeded" {
			bad++
		}
		t.Latency += r.Latency
		t.Wall += r.Wall
		t.Functions += r.Functions
		t.Tasks += r.Tasks
		t.PeakConc = max(t.PeakConc, r.PeakConc)
		t.Sustained = max(t.Sustained, r.Sustained)
		t.ModelCPU += r.ModelCPU
		t.Throttled += r.Throttled
		if t.LimitMin < 0 || r.LimitMin < t.LimitMin {
			t.LimitMin = r.LimitMin
		}
		t.Limit = r.Limit
		t.SlowDowns += r.SlowDowns
		t.Retries += r.Retries
		t.Gets += r.Gets
		t.Puts += r.Puts
		if r.PeakGet.Get > t.PeakGet.Get {
			t.PeakGet = r.PeakGet
		}
		if r.PeakPut.Put > t.PeakPut.Put {
			t.PeakPut = r.PeakPut
		}
		t.RedisCmds += r.RedisCmds
		t.RedisPeakOps = max(t.RedisPeakOps, r.RedisPeakOps)
		t.CPU += r.CPU
		t.RedisCPU += r.RedisCPU
		t.RSS = max(t.RSS, r.RSS)
		t.RedisMem = max(t.RedisMem, r.RedisMem)
		t.Dollars += r.Dollars
		t.Crashes += r.Crashes
		t.Stragglers += r.Stragglers
		t.Hedges += r.Hedges
	}
	if bad > 0 {
		t.State = fmt.Sprintf("%d failed", bad)
	}
	line(w, t)
	perTask := perTaskOf(t.CPU, t.Tasks)
	fmt.Fprintf(w, "tasks %d, crashes %d, stragglers %d, hedged %d; coordinator CPU per task %v (models %v); in flight: peak %d, sustained over 1 s %d\n",
		t.Tasks, t.Crashes, t.Stragglers, t.Hedges, perTask.Round(time.Microsecond), perTaskOf(t.ModelCPU, t.Tasks).Round(time.Microsecond),
		t.PeakConc, t.Sustained)
	fmt.Fprintf(w, "Lambda 429s %d; coordinator concurrency limit: lowest %d, at the end %d\n", t.Throttled, t.LimitMin, t.Limit)
	fmt.Fprintf(w, "hottest GET prefix %s (%.0f/s), hottest PUT prefix %s (%.0f/s)\n",
		shortPrefix(t.PeakGet.Prefix), t.PeakGet.Get, shortPrefix(t.PeakPut.Prefix), t.PeakPut.Put)
	for _, r := range rs {
		if r.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", r.Name, r.Error)
		}
	}
}

func perTaskOf(d time.Duration, tasks int64) time.Duration {
	if tasks <= 0 {
		return 0
	}
	return d / time.Duration(tasks)
}

func line(w io.Writer, r QueryReport) {
	fmt.Fprintf(w, "%-8s %-9s %9s %8s %6d %5d %5d %6d %6d %5d %9d %8d %8.0f %8.0f %9d %8.0f %8s %7s %7s %6dM %6dM %9.4f\n",
		r.Name, r.State, r.Latency.Round(100*time.Millisecond), r.Wall.Round(10*time.Millisecond), r.Functions, r.PeakConc, r.Sustained,
		r.Throttled, r.SlowDowns, r.Retries, r.Gets, r.Puts, r.PeakGet.Get, r.PeakPut.Put, r.RedisCmds, r.RedisPeakOps,
		r.CPU.Round(10*time.Millisecond), r.ModelCPU.Round(10*time.Millisecond), r.RedisCPU.Round(10*time.Millisecond), r.RedisMem>>20, r.RSS>>20, r.Dollars)
}

// shortPrefix drops the job id from a prefix for the report.
func shortPrefix(p string) string {
	if i := strings.Index(p, "jobs/"); i >= 0 {
		rest := p[i+5:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			return p[:i] + "jobs/*/" + rest[j+1:]
		}
	}
	return p
}

// PrintMix writes the small jobs' latencies of Mix runs, one line each.
func PrintMix(w io.Writer, rs []MixReport) {
	for _, r := range rs {
		ls := append([]time.Duration(nil), r.Small...)
		sort.Slice(ls, func(i, j int) bool { return ls[i] < ls[j] })
		q := func(f float64) time.Duration {
			if len(ls) == 0 {
				return 0
			}
			return ls[min(len(ls)-1, int(f*float64(len(ls))))].Round(100 * time.Millisecond)
		}
		adm := "no admission limit"
		if r.MaxJobs > 0 {
			adm = fmt.Sprintf("max jobs %d", r.MaxJobs)
		}
		fmt.Fprintf(w, "fair share %-5v, %-18s: big job %s in %v; %d small jobs: p50 %v, p90 %v, max %v (%d failed)\n",
			r.FairShare, adm, r.BigState, r.Big.Round(time.Second), len(ls), q(0.5), q(0.9), q(1), r.Failed)
		in := make([]string, len(r.Small))
		for i, d := range r.Small {
			in[i] = d.Round(time.Second).String()
		}
		fmt.Fprintf(w, "    small jobs in submission order: %s\n", strings.Join(in, " "))
		fmt.Fprintf(w, "    redis: peak %d round trips in flight (pool of %d), peak %d in the pool's get (waiting or dialling, sampled), %d waited for a connection (%v in all), %d timeouts; %d hedged duplicates, %d retries\n",
			r.RedisPeakInFlight, r.RedisPool, r.RedisPeakQueue, r.RedisWaits, r.RedisWait.Round(time.Millisecond), r.RedisTimeouts, r.Hedges, r.Retries)
		if len(r.Queued) > 0 {
			qs := append([]time.Duration(nil), r.Queued...)
			sort.Slice(qs, func(i, j int) bool { return qs[i] < qs[j] })
			fmt.Fprintf(w, "    waiting for admission (in the small jobs' latency): p50 %v, max %v\n",
				qs[len(qs)/2].Round(100*time.Millisecond), qs[len(qs)-1].Round(100*time.Millisecond))
		}
	}
}
