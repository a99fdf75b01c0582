package coordinator

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/adaptive"
)

// TestDecodeLegacyTaskPlans: the per-decision fields a job record held
// before task plans (as the old save wrote them, "null" for a map no rule
// filled) decode into the task plans they stand for.
func TestDecodeLegacyTaskPlans(t *testing.T) {
	m := map[string]string{
		"groups":     `{"1":[[0,1],[2]],"3":[[0]]}`,
		"skew":       `{"1":[{"part":3,"input":0,"lo":0,"hi":2},{"part":3,"input":0,"lo":2,"hi":4}]}`,
		"combine":    `{"5":2}`,
		"scan_tasks": `{"0":4}`,
		"skipped":    `{"2":"input stage 0 is empty"}`,
	}
	got, err := decodeTaskPlans(m)
	if err != nil {
		t.Fatal(err)
	}
	want := adaptive.TaskPlans{
		0: {ScanTasks: 4},
		1: {Groups: [][]int{{0, 1}, {2}}, Skew: []adaptive.SkewTask{{Part: 3, Input: 0, Lo: 0, Hi: 2}, {Part: 3, Input: 0, Lo: 2, Hi: 4}}},
		2: {Skipped: true, Reason: "input stage 0 is empty"},
		3: {Groups: [][]int{{0}}},
		5: {Combine: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("legacy fields decode to %+v, want %+v", got, want)
	}
	// The oldest records have no skew, combine or scan_tasks at all, and
	// older saves wrote "null" for maps no rule filled.
	for _, m := range []map[string]string{
		{"groups": `{"1":[[0]]}`, "skipped": `{}`},
		{"groups": `{"1":[[0]]}`, "skipped": `{}`, "skew": "null", "combine": "null", "scan_tasks": "null"},
	} {
		got, err := decodeTaskPlans(m)
		if err != nil || !reflect.DeepEqual(got, adaptive.TaskPlans{1: {Groups: [][]int{{0}}}}) {
			t.Fatalf("%v: %+v, %v", m, got, err)
		}
	}
	// A record with neither is corrupt, not a plan of no tasks.
	if _, err := decodeTaskPlans(map[string]string{"skipped": "{}"}); err == nil {
		t.Fatal("a record without task plans decoded")
	}
	// The new field wins over stale legacy ones.
	got, err = decodeTaskPlans(map[string]string{fieldTasks: `{"1":{"groups":[[0,1]]}}`, "groups": `{"1":[[0],[1]]}`})
	if err != nil || !reflect.DeepEqual(got, adaptive.TaskPlans{1: {Groups: [][]int{{0, 1}}}}) {
		t.Fatalf("tasks field: %+v, %v", got, err)
	}
}

// TestResumeLegacyJobRecord: a job an older coordinator was driving (its
// record holds the per-decision fields, no task plans) resumes mid-flight
// under this one: the running stage adopts its committed tasks, and the
// next stage runs the task groups the old record planned.
func TestResumeLegacyJobRecord(t *testing.T) {
	e := newFakeEnv(t, 6)
	block := make(chan struct{})
	defer close(block)
	e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
		if s.Stage == 0 && s.Task >= 3 && s.Fence == 1 {
			select {
			case <-block:
			case <-ctx.Done():
				return nil, ctx.Err(), true
			}
		}
		return nil, nil, false
	}
	a := e.coordinator(t, testConfig("a"))
	ctx := context.Background()
	job, err := a.Submit(ctx, "q", SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if sm, _ := a.store.Stage(ctx, job, 0); sm.Done == 3 {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	a.Close() // dies with tasks 3..5 of stage 0 in flight
	// Rewrite the record as the old coordinator saved it: stage 1's two
	// partitions coalesced into one task.
	if err := e.rdb.HDel(ctx, kJob(job), fieldTasks).Err(); err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.HSet(ctx, kJob(job), "groups", `{"1":[[0,1]]}`, "skipped", "{}",
		"skew", "null", "combine", "null", "scan_tasks", "null").Err(); err != nil {
		t.Fatal(err)
	}
	calls := map[int]int{}
	for t := 0; t < 6; t++ {
		calls[t] = len(e.inv.specsOf(0, t))
	}
	b := e.coordinator(t, testConfig("b"))
	b.Go(job)
	if m := waitJob(t, b, job); m.State != StateSucceeded {
		t.Fatalf("job %s: %s", m.State, m.Error)
	}
	for task := 0; task < 3; task++ {
		if n := len(e.inv.specsOf(0, task)) - calls[task]; n != 0 {
			t.Fatalf("committed task %d of stage 0 ran again after the takeover", task)
		}
	}
	if len(e.inv.specsOf(1, 0)) == 0 || len(e.inv.specsOf(1, 1)) != 0 {
		t.Fatalf("stage 1 ran %d+%d tasks, want the one task of the legacy groups", len(e.inv.specsOf(1, 0)), len(e.inv.specsOf(1, 1)))
	}
	if spec := e.inv.specsOf(1, 0)[0]; len(spec.Inputs) != 1 || len(spec.Inputs[0].Objects) != 2*6 {
		t.Fatalf("stage 1 task reads %+v, want both partitions of the 6 map outputs", spec.Inputs)
	}
	if n := e.rdb.HExists(ctx, kJob(job), fieldTasks).Val(); !n {
		t.Fatalf("the resumed job's record has no %s field", fieldTasks)
	}
}
