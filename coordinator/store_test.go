package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/local/redisserver"
	"github.com/sluicedb/sluice/shuffle"
)

// redisBackends returns clients of miniredis and, when installed, a real
// redis-server: every Lua transition must behave the same on both.
func redisBackends(t *testing.T) map[string]redis.UniversalClient {
	out := map[string]redis.UniversalClient{}
	mr := miniredis.RunT(t)
	out["miniredis"] = redis.NewClient(&redis.Options{Addr: mr.Addr()})
	miniredisByAddr[mr.Addr()] = mr
	srv, err := redisserver.Start(context.Background())
	switch {
	case errors.Is(err, redisserver.ErrNotInstalled) && os.Getenv("CI") == "":
		t.Log("redis-server not installed: testing miniredis only")
	case err != nil:
		t.Fatal(err)
	default:
		t.Cleanup(srv.Stop)
		out["redis-server"] = redis.NewClient(&redis.Options{Addr: srv.Addr})
	}
	return out
}

func TestLeaseAndFencing(t *testing.T) {
	ctx := context.Background()
	for name, rdb := range redisBackends(t) {
		t.Run(name, func(t *testing.T) {
			s := NewStore(rdb)
			job := NewJobID()
			if err := s.CreateJob(ctx, job, map[string]any{"state": StateRunning}); err != nil {
				t.Fatal(err)
			}
			f1, ok, err := s.Acquire(ctx, job, "a", 200*time.Millisecond)
			if err != nil || !ok || f1 != 1 {
				t.Fatalf("first acquire: fence %d ok %v err %v", f1, ok, err)
			}
			if f, ok, _ := s.Acquire(ctx, job, "a", 200*time.Millisecond); !ok || f != f1 {
				t.Fatalf("renewal by the holder changed the fence: %d ok %v", f, ok)
			}
			if _, ok, _ := s.Acquire(ctx, job, "b", time.Second); ok {
				t.Fatal("b took a lease a still holds")
			}
			if err := s.SetJob(ctx, job, f1, "k", "v"); err != nil {
				t.Fatal(err)
			}
			// a's lease expires; b takes over with a new fence.
			time.Sleep(300 * time.Millisecond)
			if name == "miniredis" {
				// miniredis expires keys on FastForward, not on wall time.
				mr := rdb.(*redis.Client)
				_ = mr.Del(ctx, kLease(job)).Err()
			}
			f2, ok, err := s.Acquire(ctx, job, "b", time.Second)
			if err != nil || !ok || f2 != f1+1 {
				t.Fatalf("takeover: fence %d ok %v err %v", f2, ok, err)
			}
			// a's late writes are rejected.
			if err := s.SetJob(ctx, job, f1, "k", "stale"); !errors.Is(err, ErrStaleFence) {
				t.Fatalf("stale SetJob: %v, want ErrStaleFence", err)
			}
			if _, _, err := s.StartAttempt(ctx, job, f1, 0, 0); !errors.Is(err, ErrStaleFence) {
				t.Fatalf("stale StartAttempt: %v", err)
			}
			if _, err := s.Commit(ctx, job, f1, 0, 0, 1, []byte("{}")); !errors.Is(err, ErrStaleFence) {
				t.Fatalf("stale Commit: %v", err)
			}
			if k := rdb.HGet(ctx, kJob(job), "k").Val(); k != "v" {
				t.Fatalf("stale write landed: %q", k)
			}
		})
	}
}

func TestFirstCommitWins(t *testing.T) {
	ctx := context.Background()
	for name, rdb := range redisBackends(t) {
		t.Run(name, func(t *testing.T) {
			s := NewStore(rdb)
			job := NewJobID()
			_ = s.CreateJob(ctx, job, map[string]any{"state": StateRunning})
			f, _, _ := s.Acquire(ctx, job, "a", time.Second)
			a1, done, err := s.StartAttempt(ctx, job, f, 1, 3)
			if err != nil || done || a1 != 1 {
				t.Fatalf("attempt 1: %d %v %v", a1, done, err)
			}
			a2, _, _ := s.StartAttempt(ctx, job, f, 1, 3)
			if a2 != 2 {
				t.Fatalf("attempt 2 numbered %d", a2)
			}
			won, err := s.Commit(ctx, job, f, 1, 3, a2, []byte(`{"attempt":2}`))
			if err != nil || !won {
				t.Fatalf("first commit: won %v err %v", won, err)
			}
			won, err = s.Commit(ctx, job, f, 1, 3, a1, []byte(`{"attempt":1}`))
			if err != nil || won {
				t.Fatalf("second commit: won %v err %v, want lost", won, err)
			}
			if _, done, _ := s.StartAttempt(ctx, job, f, 1, 3); !done {
				t.Fatal("a committed task opened another attempt")
			}
			tm, _ := s.Task(ctx, job, 1, 3)
			if tm.Committed != 2 || tm.result != `{"attempt":2}` {
				t.Fatalf("task record: %v", tm)
			}
			sm, _ := s.Stage(ctx, job, 1)
			if sm.Done != 1 {
				t.Fatalf("stage done count %d, want 1", sm.Done)
			}
		})
	}
}

// TestStageOutputFromTasks: a stage's output record holds statistics
// only; StageOutput rebuilds its objects from the committed task results,
// in task order, with repairs' replacements. A record that does not
// decode is corrupt; a read that is cancelled is not.
func TestStageOutputFromTasks(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	s := NewStore(rdb)
	ctx := context.Background()
	ref := func(task, part int) shuffle.PartitionStat {
		return shuffle.PartitionStat{Partition: part, Rows: 1, Offset: int64(8 + part), Bytes: 1, Key: fmt.Sprintf("o/%d", task)}
	}
	for task := range 3 {
		res, _ := json.Marshal(function.TaskResult{Stage: 0, Task: task, Partitions: []shuffle.PartitionStat{ref(task, 0), ref(task, 1)}})
		mr.HSet(kTask("j", 0, task), "result", string(res))
	}
	lost := ref(1, 1).Ref()
	out := &stageOutput{Replaced: map[string][]shuffle.ObjectRef{lost.ID(): {{Key: "o/1-again", Offset: 9, Bytes: 1, Rows: 1}}}}
	sm := &StageRecord{output: string(out.record(3))}
	if strings.Contains(sm.output, "o/0") {
		t.Fatalf("the record names objects: %s", sm.output)
	}
	got, err := s.StageOutput(ctx, "j", 0, sm)
	if err != nil {
		t.Fatal(err)
	}
	keys := func(p int) string {
		var ks []string
		for _, r := range got.partObjects(p) {
			ks = append(ks, r.Key)
		}
		return strings.Join(ks, " ")
	}
	if keys(0) != "o/0 o/1 o/2" || keys(1) != "o/0 o/1-again o/2" {
		t.Fatalf("objects: partition 0 %q, partition 1 %q", keys(0), keys(1))
	}

	// A wide stage: 40 tasks of 300 partitions each (every third
	// partition empty in odd tasks). The task results in Redis are packed
	// (the key once, arrays of rows and sizes); the rebuilt output gives
	// each partition its objects in task order, the same refs as the
	// results' partitions, and partitions() only the non-empty ones.
	const wideTasks, wideParts = 40, 300
	want := map[int][]shuffle.ObjectRef{}
	for task := range wideTasks {
		var ps []shuffle.PartitionStat
		off := int64(8)
		for p := range wideParts {
			if task%2 == 1 && p%3 == 0 {
				continue
			}
			st := shuffle.PartitionStat{Partition: p, Rows: int64(task + p + 1), Offset: off, Bytes: int64(10 + p%7),
				Key: fmt.Sprintf("jobs/w/stage-1/%02x/task-%d/a0/data.arrow", task, task), Checksum: shuffle.Sum(task*1000 + p + 1)}
			off += st.Bytes
			ps = append(ps, st)
			want[p] = append(want[p], st.Ref())
		}
		res, _ := json.Marshal(function.TaskResult{Stage: 1, Task: task, Partitions: ps})
		if !strings.Contains(string(res), `"partitions":{"packed":`) {
			t.Fatalf("task %d: result not packed: %.200s", task, res)
		}
		var plain []byte
		plain, _ = json.Marshal(ps)
		if len(res)*2 > len(plain) {
			t.Fatalf("task %d: packed result %d bytes, its partitions as an array %d", task, len(res), len(plain))
		}
		mr.HSet(kTask("j", 1, task), "result", string(res))
	}
	wide := &StageRecord{output: string((&stageOutput{}).record(wideTasks))}
	wout, err := s.StageOutput(ctx, "j", 1, wide)
	if err != nil {
		t.Fatal(err)
	}
	if got := wout.partitions(); len(got) != wideParts {
		t.Fatalf("%d partitions, want %d", len(got), wideParts)
	}
	for p := range wideParts {
		if got := wout.partObjects(p); !reflect.DeepEqual(got, want[p]) {
			t.Fatalf("partition %d: %d objects, want %d (first %+v, want %+v)", p, len(got), len(want[p]), got[0], want[p][0])
		}
	}
	if n := len(wout.allObjects()); n != wideTasks*wideParts-wideTasks/2*wideParts/3 {
		t.Fatalf("allObjects: %d refs", n)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.StageOutput(cancelled, "j", 0, sm); err == nil || errors.Is(err, errCorruptRecord) {
		t.Fatalf("cancelled read: %v, want an error that is not errCorruptRecord", err)
	}
	if _, err := s.StageOutput(ctx, "j", 0, &StageRecord{output: "{"}); !errors.Is(err, errCorruptRecord) {
		t.Fatalf("undecodable record: %v, want errCorruptRecord", err)
	}
}
