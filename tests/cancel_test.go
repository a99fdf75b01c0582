package tests

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/local"
)

// slowInvoker delays every invocation (a function platform's cold start),
// so that a job lasts long enough to be cancelled in the middle.
type slowInvoker struct {
	next  coordinator.Invoker
	delay time.Duration
}

func (s slowInvoker) Invoke(ctx context.Context, spec []byte) ([]byte, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.next.Invoke(ctx, spec)
}

// TestCancelAndGC: `sluice jobs cancel` stops a running job promptly (no
// function starts once it is cancelled); after the retention period the
// shuffle objects of the cancelled job and of a succeeded one are deleted,
// but the succeeded job's result, which stays readable.
func TestCancelAndGC(t *testing.T) {
	bin := sluiceBin(t)
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", func(o *local.Options) {
		o.Functions = 2
		o.Coordinator.SplitBytes = 64 << 10
		o.Coordinator.AQE.MaxSplitBytes = 0 // keep the many small scan tasks (no size-scans)
		o.Coordinator.Retention = 300 * time.Millisecond
		o.Coordinator.GCInterval = 50 * time.Millisecond
		o.WrapInvoker = func(inv coordinator.Invoker) coordinator.Invoker { return slowInvoker{inv, 100 * time.Millisecond} }
	})
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cl := coordinator.NewClient(st.APIURL, "")
	q := `select l_returnflag, l_linestatus, count(*), sum(l_quantity) from lineitem group by 1, 2 order by 1, 2`
	job := submit(t, cl, q)
	for deadline := time.Now().Add(time.Minute); ; {
		js, err := cl.Status(ctx, job)
		if err != nil {
			t.Fatal(err)
		}
		if js.Stages[0].TasksDone >= 2 {
			if js.Stages[0].TasksDone >= js.Stages[0].Tasks {
				t.Fatal("the job finished before it could be cancelled")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job made no progress")
		}
		time.Sleep(5 * time.Millisecond)
	}
	out, errOut, code := runCLI(t, bin, t.TempDir(), nil, "jobs", "cancel", "--coordinator", st.APIURL, job)
	if code != 0 {
		t.Fatalf("sluice jobs cancel: %s", errOut)
	}
	// It says what it did: the job cancelled (or cancelling, if the
	// coordinator had not stopped it within 5 s), and what it was.
	if !strings.Contains(out, "job "+job+" cancel") || !strings.Contains(out, "it was running") || !strings.Contains(out, "stages done") {
		t.Errorf("sluice jobs cancel printed %q", out)
	}
	js, err := cl.Wait(ctx, job, nil)
	if err != nil {
		t.Fatal(err)
	}
	if js.State != coordinator.StateCancelled {
		t.Fatalf("job %s after cancel: %s (%s)", job, js.State, js.Error)
	}
	if out, _, code := runCLI(t, bin, t.TempDir(), nil, "jobs", "cancel", "--coordinator", st.APIURL, job); code != 0 || !strings.Contains(out, "already cancelled: nothing to cancel") {
		t.Errorf("second sluice jobs cancel: exit %d, %q", code, out)
	}
	// jobs ls filters by state and shows when and how long.
	out, errOut, code = runCLI(t, bin, t.TempDir(), nil, "jobs", "ls", "--coordinator", st.APIURL, "--state", "cancelled")
	if code != 0 || !strings.Contains(out, job) || !strings.Contains(out, " ago)") || !strings.Contains(out, "DURATION") {
		t.Errorf("jobs ls --state cancelled: exit %d, %q %s", code, out, errOut)
	}
	if out, _, _ := runCLI(t, bin, t.TempDir(), nil, "jobs", "ls", "--coordinator", st.APIURL, "--state", "succeeded,failed"); strings.Contains(out, job) {
		t.Errorf("jobs ls --state succeeded,failed lists the cancelled job %s:\n%s", job, out)
	}
	if _, errOut, code := runCLI(t, bin, t.TempDir(), nil, "jobs", "ls", "--coordinator", st.APIURL, "--state", "done"); code == 0 || !strings.Contains(errOut, "want running, queued, succeeded, failed or cancelled") {
		t.Errorf("jobs ls --state done: exit %d, %s", code, errOut)
	}
	invoked := st.Pool.Invocations()
	time.Sleep(300 * time.Millisecond)
	if n := st.Pool.Invocations(); n != invoked {
		t.Fatalf("%d functions started after the job was cancelled", n-invoked)
	}

	done := submit(t, cl, q)
	want := duckRows(t, db, q)
	compareRows(t, fetch(t, cl, done), want, true)
	// Wait for the collector to pass over both jobs.
	for _, id := range []string{job, done} {
		for deadline := time.Now().Add(time.Minute); ; {
			js, err := cl.Status(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if js.Collected != "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s (%s) not collected a minute after it finished", id, js.State)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	objs, err := st.Bucket.List(ctx, "jobs/"+job+"/")
	if err != nil || len(objs) != 0 {
		t.Fatalf("cancelled job: %d objects left after GC (%v)", len(objs), err)
	}
	objs, err = st.Bucket.List(ctx, "jobs/"+done+"/")
	if err != nil {
		t.Fatal(err)
	}
	refs, _, err := st.Coordinator.Store().ResultObjects(ctx, done)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != len(refs) {
		t.Fatalf("succeeded job: %d objects left after GC, want its %d result objects", len(objs), len(refs))
	}
	for _, o := range objs {
		if !strings.Contains(o.Key, "/stage-") || strings.Contains(o.Key, "_manifest") {
			t.Fatalf("succeeded job: %s kept after GC", o.Key)
		}
	}
	compareRows(t, fetch(t, cl, done), want, true) // the result is still readable
}
