package coordinator

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/shuffle"
)

// BenchmarkScaleStageOutput measures the coordinator's memory for the
// output of a wide scan stage at the SF 1,000 shape of the simulation
// (9,634 scan tasks x 2,000 partitions, every partition with a checksum
// as the real shuffle writer records them), and the cost of one
// combining task's spec (the 168 combining tasks of that stage each read
// every partition of a run of ~57 tasks). The results come in as a
// function's TaskResult JSON (packed, as in Redis) and are kept as
// runStage keeps them. It prints figures and asserts none of them:
//
//	go test -run '^$' -bench BenchmarkScaleStageOutput -benchtime 1x ./coordinator/
//
// SLUICE_SCALE_TASKS, SLUICE_SCALE_PARTS and SLUICE_SCALE_COMBINERS
// change the shape.
func BenchmarkScaleStageOutput(b *testing.B) {
	tasks, parts, combiners := envInt("SLUICE_SCALE_TASKS", 9634), envInt("SLUICE_SCALE_PARTS", 2000), envInt("SLUICE_SCALE_COMBINERS", 168)
	rng := rand.New(rand.NewPCG(1, 2))
	for range b.N {
		// One task's result as the function encodes it.
		result := func(t int) []byte {
			key := shuffle.DataKey(shuffle.SpreadAttemptPrefix("sluice", 2, "j-0123456789abcdef", 0, t, 1))
			var sb strings.Builder
			fmt.Fprintf(&sb, `{"job":"j","stage":0,"task":%d,"attempt":1,"partitions":{"packed":%d,"key":%q,"rows":[`, t, parts, key)
			for p := range parts {
				if p > 0 {
					sb.WriteByte(',')
				}
				sb.WriteString(strconv.Itoa(300 + p%23))
			}
			sb.WriteString(`],"bytes":[`)
			for p := range parts {
				if p > 0 {
					sb.WriteByte(',')
				}
				sb.WriteString(strconv.Itoa(5000 + p%97))
			}
			sb.WriteString(`],"base":8,"sum":[`)
			for p := range parts {
				if p > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, `"xxh3:%016x"`, rng.Uint64())
			}
			sb.WriteString(`]}}`)
			return []byte(sb.String())
		}
		runtime.GC()
		var m0 runtime.MemStats
		runtime.ReadMemStats(&m0)
		out := &stageOutput{tasks: make([]taskParts, tasks)}
		start := time.Now()
		for t := range tasks {
			var r function.TaskResult
			if err := json.Unmarshal(result(t), &r); err != nil {
				b.Fatal(err)
			}
			out.tasks[t] = packParts(r.Partitions)
		}
		took := time.Since(start)
		runtime.GC()
		var m1 runtime.MemStats
		runtime.ReadMemStats(&m1)
		held := int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
		n := int64(tasks) * int64(parts)
		b.ReportMetric(float64(held)/1e6, "output-MB")
		b.ReportMetric(float64(held)/float64(n), "B/partition")
		b.Logf("stage output of %d tasks x %d partitions (%.1f M refs): %.0f MB held (%.1f B a partition), heap in use %.0f MB, process memory from the OS %.0f MB; %v to decode and keep the results",
			tasks, parts, float64(n)/1e6, float64(held)/1e6, float64(held)/float64(n), float64(m1.HeapInuse)/1e6, float64(m1.Sys)/1e6, took.Round(time.Millisecond))

		// One combining task's spec: its refs built, encoded, dropped.
		runs, ok := out.taskRuns(combiners)
		if !ok {
			b.Fatal("no task runs")
		}
		r := hashRead{stage: 0, out: out, tasks: true, lo: runs[0][0], hi: runs[0][1]}
		runtime.GC()
		runtime.ReadMemStats(&m0)
		start = time.Now()
		w := taskWork{reads: []hashRead{r}}
		spec := &function.TaskSpec{Version: function.SpecVersion, Job: "j", Stage: 2, Task: 0, Attempt: 1, PlanKey: "plan",
			OutputPrefix: "out/", Inputs: w.specInputs(), Deadline: time.Now()}
		refs := len(spec.Inputs[0].Objects)
		if spec.Inputs[0].Refs != nil {
			refs = spec.Inputs[0].Refs.N
		}
		enc, err := spec.EncodeParts()
		if err != nil {
			b.Fatal(err)
		}
		took = time.Since(start)
		runtime.ReadMemStats(&m1)
		b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/1e6, "spec-alloc-MB")
		b.Logf("one combining spec (tasks %d-%d, %d refs): %.1f MB allocated to build and encode, %.1f MB encoded, %v",
			r.lo, r.hi, refs, float64(m1.TotalAlloc-m0.TotalAlloc)/1e6, float64(len(enc.Body()))/1e6, took.Round(time.Millisecond))
		runtime.KeepAlive(out)
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
