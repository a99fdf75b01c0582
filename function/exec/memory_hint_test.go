package exec

import "testing"

// TestMemoryLimitErrorHint: an SL104 names the operator and says what to
// change, by why spilling did not help. Exact messages.
func TestMemoryLimitErrorHint(t *testing.T) {
	tests := []struct {
		err  MemoryLimitError
		want string
	}{
		{MemoryLimitError{Operator: "window", Limit: 33554432, Used: 33807998},
			"exec: window: memory limit exceeded: needs 33807998 bytes, task memory budget 33554432 bytes; hint: raise --function-memory (a task's budget is half of it), or spread the window's input over more tasks: a higher --partitions and a lower --target-partition-bytes"},
		{MemoryLimitError{Operator: "aggregate", Limit: 100, Used: 200, Reason: "no spill directory"},
			"exec: aggregate: memory limit exceeded: needs 200 bytes, task memory budget 100 bytes (no spill directory); hint: let the functions spill to disk (a spill directory), or raise --function-memory (a task's budget is half of it)"},
		{MemoryLimitError{Operator: "sort", Limit: 100, Used: 200, Reason: "spill space of 1 bytes used up"},
			"exec: sort: memory limit exceeded: needs 200 bytes, task memory budget 100 bytes (spill space of 1 bytes used up); hint: raise SLUICE_SPILL_LIMIT on the functions, or raise --function-memory (a task's budget is half of it)"},
		{MemoryLimitError{Operator: "hash join build", Limit: 100, Reason: "spill disk full: write spill file: no space left on device"},
			"exec: hash join build: memory limit exceeded: task memory budget 100 bytes (spill disk full: write spill file: no space left on device); hint: free space on the spill disk, or raise --function-memory (a task's budget is half of it)"},
		{MemoryLimitError{Operator: "aggregate", Limit: 100, Used: 200, Reason: "the result of r0 (string_agg) " + resultAloneReason},
			"exec: aggregate: memory limit exceeded: needs 200 bytes, task memory budget 100 bytes (the result of r0 (string_agg) alone does not fit: it is built in memory); hint: raise --function-memory (a task's budget is half of it) (the result is one value: more tasks do not help)"},
		{MemoryLimitError{Operator: "aggregate", Limit: 100, Used: 200, Reason: tooDeepReason + " 4 levels deep still does not fit, holding 1 group(s): a group larger than the budget"},
			"exec: aggregate: memory limit exceeded: needs 200 bytes, task memory budget 100 bytes (a partition spilled 4 levels deep still does not fit, holding 1 group(s): a group larger than the budget); hint: raise --function-memory (a task's budget is half of it) (more tasks do not split one group)"},
	}
	for _, tt := range tests {
		t.Run(tt.err.Operator, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
