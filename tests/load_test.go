package tests

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/sluicedb/sluice/coordinator"
)

// TestLoad runs 20 concurrent jobs of mixed TPC-H queries on one
// embedded stack (miniredis; with -long also on a real redis-server);
// every answer must match DuckDB's.
func TestLoad(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	for i, be := range backends {
		if i > 0 && !*longFlag {
			break
		}
		t.Run(be.name, func(t *testing.T) {
			url, stop := be.start(t)
			defer stop()
			st := startStack(t, url, nil)
			if _, err := st.LoadDir(context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			loadJobs(t, st.APIURL, db, 20)
		})
	}
}

func loadJobs(t *testing.T, apiURL string, db *sql.DB, n int) {
	names := []string{"q01", "q03", "q05", "q06", "q10", "q12", "q14", "q04", "q19", "q07"}
	want := map[string][]row{}
	qs := map[string]query{}
	for _, q := range tpchQueries(t) {
		qs[q.name] = q
	}
	for _, name := range names[:min(n, len(names))] {
		want[name] = duckRows(t, db, qs[name].sql)
	}
	cl := coordinator.NewClient(apiURL, "")
	began := time.Now()
	jobs := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			on := true
			job, err := cl.Submit(context.Background(), qs[names[i%len(names)]].sql, &on)
			if err != nil {
				t.Errorf("submit %s: %v", names[i%len(names)], err)
			}
			jobs[i] = job
		}(i)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, job := range jobs {
		q := qs[names[i%len(names)]]
		compareRows(t, fetch(t, cl, job), want[q.name], q.ordered)
	}
	t.Logf("%d concurrent jobs on one embedded stack: all answers right in %v", n, time.Since(began).Round(time.Millisecond))
}
