package coordinator

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"golang.org/x/sync/semaphore"

	"github.com/sluicedb/sluice/function"

	"github.com/sluicedb/sluice/shuffle"
)

// wideOutput returns a finished stage's output of tasks tasks, each
// writing one data object with every partition of parts (task 2 wrote
// nothing, odd tasks leave every third partition empty), packed as the
// coordinator keeps it.
func wideOutput(tasks, parts int, keyOf func(task int) string) *stageOutput {
	out := &stageOutput{tasks: make([]taskParts, tasks)}
	for t := range tasks {
		if t == 2 {
			continue
		}
		var ps []shuffle.PartitionStat
		off := int64(8)
		for p := range parts {
			if t%2 == 1 && p%3 == 0 {
				continue
			}
			st := shuffle.PartitionStat{Partition: p, Rows: int64(t + p + 1), Offset: off, Bytes: int64(10 + (t+p)%7), Key: keyOf(t)}
			off += st.Bytes
			ps = append(ps, st)
		}
		out.tasks[t] = packParts(ps)
	}
	return out
}

func wideKey(prefix string) func(int) string {
	return func(t int) string { return shuffle.DataKey(shuffle.AttemptPrefix(prefix, "j", 0, t, 0)) }
}

// readers returns a reader stage's work: one task per group of
// partitions (coalesced by 3), each a hash read of out.
func readers(out *stageOutput, parts int) []taskWork {
	var work []taskWork
	for p := 0; p < parts; p += 3 {
		var group []int
		for q := p; q < min(p+3, parts); q++ {
			group = append(group, q)
		}
		work = append(work, taskWork{reads: []hashRead{{stage: 0, out: out, parts: group}}})
	}
	return work
}

// TestPlanningBuildsNoRefs: planning the readers of a wide exchange (their
// input bytes and the fingerprint a resumed stage is checked against)
// builds none of the writers x partitions refs, so its cost is in the
// packed partitions (one pass) and the readers' partition lists, not in
// their product; a task's refs are built when its spec is, and they are
// the same refs, with the bytes planning counted.
func TestPlanningBuildsNoRefs(t *testing.T) {
	const tasks, parts = 60, 200
	out := wideOutput(tasks, parts, wideKey("p"))
	work := readers(out, parts)
	total, print := workBytes(work), workPrint(work)
	if n := out.refsBuilt.Load(); n != 0 {
		t.Fatalf("planning built %d refs, want none", n)
	}
	var want int64
	for i := range out.tasks {
		for j := range out.tasks[i].len() {
			want += out.tasks[i].bytesAt(j)
		}
	}
	if total != want {
		t.Fatalf("input bytes %d, want %d (every partition's)", total, want)
	}
	// The refs built per task are those of its partitions, in partition
	// then task order, and add up to the bytes planned.
	var got int64
	for _, w := range work {
		for _, in := range w.readInputs() {
			for _, o := range in.Objects {
				got += o.Bytes
			}
		}
	}
	if got != want {
		t.Fatalf("the tasks' refs hold %d bytes, planning counted %d", got, want)
	}
	ins := work[1].readInputs()
	var wantRefs []shuffle.ObjectRef
	for _, p := range []int{3, 4, 5} {
		for ti := range out.tasks {
			if j := out.tasks[ti].find(p); j >= 0 {
				wantRefs = append(wantRefs, out.tasks[ti].stat(j).Ref())
			}
		}
	}
	if len(ins) != 1 || len(ins[0].Objects) != len(wantRefs) {
		t.Fatalf("task 1 reads %d inputs, want one of %d refs", len(ins), len(wantRefs))
	}
	for i, o := range ins[0].Objects {
		if o != wantRefs[i] {
			t.Fatalf("task 1's ref %d is %+v, want %+v (partitions 3-5 of every task, in task order)", i, o, wantRefs[i])
		}
	}

	// The fingerprint is the same for the same output rebuilt (a resumed
	// stage), and changes with the objects or the partitions read.
	if again := workPrint(readers(wideOutput(tasks, parts, wideKey("p")), parts)); again != print {
		t.Errorf("the same output gives fingerprint %s, then %s", print, again)
	}
	if other := workPrint(readers(wideOutput(tasks, parts, wideKey("q")), parts)); other == print {
		t.Error("other objects give the same fingerprint")
	}
	moved := readers(out, parts)
	moved[0].reads[0].parts, moved[1].reads[0].parts = moved[1].reads[0].parts, moved[0].reads[0].parts
	if workPrint(moved) == print {
		t.Error("tasks reading other partitions give the same fingerprint")
	}
}

// TestTaskRuns: a combining stage's runs of tasks hold exactly the refs of
// objectGroups (the objects of each run, every partition, in task order),
// without building them when planned.
func TestTaskRuns(t *testing.T) {
	const tasks, parts = 23, 17
	for _, k := range []int{0, 1, 2, 5, 22, 40} {
		out := wideOutput(tasks, parts, wideKey("p"))
		runs, ok := out.taskRuns(k)
		if !ok {
			t.Fatalf("k=%d: a packed output without replacements has no task runs", k)
		}
		var work []taskWork
		for _, r := range runs {
			work = append(work, taskWork{reads: []hashRead{{stage: 0, out: out, tasks: true, lo: r[0], hi: r[1]}}})
		}
		bytes := workBytes(work)
		_ = workPrint(work)
		if n := out.refsBuilt.Load(); n != 0 {
			t.Fatalf("k=%d: planning built %d refs", k, n)
		}
		want := out.objectGroups(k)
		if len(work) != len(want) {
			t.Fatalf("k=%d: %d runs, objectGroups has %d", k, len(work), len(want))
		}
		var wantBytes int64
		for i, w := range work {
			got := w.readInputs()[0].Objects
			if !reflect.DeepEqual(sortedRefs(got), sortedRefs(want[i])) {
				t.Fatalf("k=%d run %d: %d refs, objectGroups %d", k, i, len(got), len(want[i]))
			}
			for _, o := range want[i] {
				wantBytes += o.Bytes
			}
		}
		if bytes != wantBytes {
			t.Fatalf("k=%d: planned %d bytes, the groups hold %d", k, bytes, wantBytes)
		}
	}
	// Replacements (a repaired object) or objects per partition
	// (manifest version 1) go through objectGroups.
	out := wideOutput(tasks, parts, wideKey("p"))
	out.Replaced = map[string][]shuffle.ObjectRef{"x": nil}
	if _, ok := out.taskRuns(3); ok {
		t.Error("an output with replacements has task runs")
	}
	v1 := wideOutput(4, 3, wideKey("p"))
	v1.tasks[0] = packParts([]shuffle.PartitionStat{{Partition: 0, Key: "a", Bytes: 1}, {Partition: 1, Key: "b", Bytes: 1}})
	if _, ok := v1.taskRuns(3); ok {
		t.Error("an output of objects per partition has task runs")
	}
}

// sortedRefs orders refs by key then partition (objectGroups lists an
// object's refs in partition order, as taskRuns does; this only makes the
// comparison independent of the order of objects within a run).
func sortedRefs(rs []shuffle.ObjectRef) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%s#%06d/%d/%d", r.Key, r.Part, r.Offset, r.Bytes)
	}
	return out
}

// TestSpecRefBudget: a task whose spec lists more refs than the budget of
// specs being built at once still runs (it takes the whole budget), so a
// small budget slows building, never blocks it; the specs are whole.
func TestSpecRefBudget(t *testing.T) {
	const files = 12
	e := newFakeEnv(t, files)
	c := e.coordinator(t, testConfig("a"))
	c.specRefs = specBudget{semaphore.NewWeighted(5), 5}
	job, err := c.Submit(context.Background(), "q", SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := waitJob(t, c, job); m.State != StateSucceeded {
		t.Fatalf("job %s: %s (%s)", job, m.State, m.Error)
	}
	for task := range 2 {
		specs := e.inv.specsOf(1, task)
		if len(specs) == 0 || len(specs[0].Inputs) != 1 || len(specs[0].Inputs[0].Objects) != files {
			t.Fatalf("reader %d: specs %d, want one input of %d refs (one per scan task)", task, len(specs), files)
		}
	}
	if !c.specRefs.sem.TryAcquire(5) {
		t.Fatal("the budget was not given back")
	}
}

// TestPackPartsCompact: a task's partitions round-trip through packParts
// in every layout, and the usual one (partitions 0..n-1 back to back in
// one object) keeps neither partition numbers nor sizes.
func TestPackPartsCompact(t *testing.T) {
	st := func(p int, off, n int64, key string) shuffle.PartitionStat {
		return shuffle.PartitionStat{Partition: p, Rows: int64(p + 1), Offset: off, Bytes: n, Key: key}
	}
	cases := []struct {
		name              string
		ps                []shuffle.PartitionStat
		withPart, withLen bool
	}{
		{"dense, contiguous", []shuffle.PartitionStat{st(0, 8, 5, "a"), st(1, 13, 7, "a"), st(2, 20, 1, "a")}, false, false},
		{"sparse", []shuffle.PartitionStat{st(0, 8, 5, "a"), st(2, 13, 7, "a"), st(5, 20, 1, "a")}, true, false},
		{"a gap", []shuffle.PartitionStat{st(0, 8, 5, "a"), st(1, 14, 7, "a")}, false, true},
		{"unsorted", []shuffle.PartitionStat{st(1, 13, 7, "a"), st(0, 8, 5, "a")}, false, false},
		{"an object per partition", []shuffle.PartitionStat{st(0, 0, 5, "a"), st(1, 0, 7, "b")}, false, true},
		{"one partition", []shuffle.PartitionStat{st(3, 8, 9, "a")}, true, false},
	}
	for _, c := range cases {
		tp := packParts(c.ps)
		if (tp.part != nil) != c.withPart || (tp.bytes != nil) != c.withLen {
			t.Errorf("%s: keeps partitions %v, sizes %v; want %v, %v", c.name, tp.part != nil, tp.bytes != nil, c.withPart, c.withLen)
		}
		if tp.len() != len(c.ps) {
			t.Fatalf("%s: %d partitions, want %d", c.name, tp.len(), len(c.ps))
		}
		for _, p := range c.ps {
			j := tp.find(p.Partition)
			if j < 0 || tp.stat(j) != p {
				t.Errorf("%s: partition %d is %+v (index %d), want %+v", c.name, p.Partition, tp.stat(max(j, 0)), j, p)
			}
		}
		if tp.find(4) >= 0 || tp.find(-1) >= 0 || tp.find(99) >= 0 {
			t.Errorf("%s: finds a partition it does not hold", c.name)
		}
	}
}

// TestCombiningSpecLazyRefs: a combining task's spec, its refs encoded
// from the packed partitions without the list being built (specInputs,
// shuffle.RefsOf), decodes to exactly the refs readInputs builds, in
// order, checksums included, next to an input given as a list; and
// specBytes counts the same bytes either way.
func TestCombiningSpecLazyRefs(t *testing.T) {
	const tasks, parts = 23, 17
	out := wideOutput(tasks, parts, wideKey("p"))
	for i := range out.tasks { // checksums on some tasks' partitions, as the writer records them
		if i%3 == 0 && out.tasks[i].len() > 0 {
			out.tasks[i].sums = make([]shuffle.Sum, out.tasks[i].len())
			for j := range out.tasks[i].sums {
				out.tasks[i].sums[j] = shuffle.Sum(1000*i + j + 1)
			}
		}
	}
	whole := function.Input{Stage: 7, Objects: shuffle.ObjectRefs{{Key: "small/object"}}}
	for _, k := range []int{1, 2, 5, 22} {
		runs, ok := out.taskRuns(k)
		if !ok {
			t.Fatal("no task runs")
		}
		for _, r := range runs {
			w := taskWork{inputs: []function.Input{whole}, reads: []hashRead{{stage: 0, out: out, tasks: true, lo: r[0], hi: r[1]}}}
			lazy := w.specInputs()
			if lazy[1].Refs == nil || lazy[1].Objects != nil {
				t.Fatalf("k=%d run %v: the combining input was built as a list", k, r)
			}
			built := w.readInputs()
			if len(built[1].Objects) < shuffle.PackMin && k < 5 {
				t.Fatalf("k=%d run %v: %d refs, too few to test the packed form", k, r, len(built[1].Objects))
			}
			mk := func(in []function.Input) *function.TaskSpec {
				return &function.TaskSpec{Version: function.SpecVersion, Job: "j", Stage: 1, Task: 0, Attempt: 1, PlanKey: "plan", OutputPrefix: "o/", Inputs: in}
			}
			if a, b := specBytes(mk(lazy)), specBytes(mk(built)); a != b || a == 0 {
				t.Fatalf("k=%d run %v: specBytes %d lazily, %d from the list", k, r, a, b)
			}
			enc, err := mk(lazy).EncodeParts()
			if err != nil {
				t.Fatal(err)
			}
			got, err := function.DecodeSpec(enc.Body())
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Inputs) != 2 || got.Inputs[1].Stage != 0 || !reflect.DeepEqual(got.Inputs[0], whole) {
				t.Fatalf("k=%d run %v: inputs %+v", k, r, got.Inputs)
			}
			if g, w := got.Inputs[1].Objects, built[1].Objects; !reflect.DeepEqual([]shuffle.ObjectRef(g), []shuffle.ObjectRef(w)) {
				t.Fatalf("k=%d run %v: decoded %d refs, built %d (or they differ)", k, r, len(g), len(w))
			}
		}
	}
}
