package adaptive

import (
	"fmt"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// SizeScans sizes a scan stage's tasks from the bytes it will really read
// and the slots there are to read them.
//
// Trigger: a pending stage that scans a table whose data (after partition
// pruning) the driver measured (State.Scans), and whose static splits of
// Config.SplitBytes make more tasks than Config.Parallelism.
//
// Rewrite: the stage runs k = max(Parallelism, ⌈bytes / MaxSplitBytes⌉)
// tasks instead (TaskPlan.ScanTasks), each a contiguous run of about bytes/k
// of the table's row groups. This is Spark's maxSplitBytes rule (splits of
// the table's bytes over the default parallelism, capped by
// maxPartitionBytes): one wave of tasks on every slot instead of several
// waves of small ones. Each invocation pays its start, plan fetch and
// commit once for more data, writes one shuffle object instead of several,
// and every reader of its output makes fewer ranged GETs. The static
// split stays the floor: a table smaller than Parallelism splits keeps
// one task per split.
//
// Safe because a scan task's rows are the union of its row groups' rows:
// how row groups are grouped into tasks changes no answer, only how many
// invocations read them.
type SizeScans struct{}

func (SizeScans) Name() string { return "size-scans" }

func (SizeScans) Apply(s *State) (string, error) {
	c := s.Config
	if c.MaxSplitBytes <= 0 || c.SplitBytes <= 0 || c.Parallelism < 1 {
		return "", nil
	}
	var notes []string
	for _, st := range s.Graph.Stages {
		if !s.Pending(st.ID) || !scans(st.Root) {
			continue
		}
		size, ok := s.Scans[st.ID]
		if !ok || size.Bytes <= 0 {
			continue
		}
		bytes, static := size.Bytes, int64(size.Splits)
		k := max(int64(c.Parallelism), ceilDiv(bytes, max(c.MaxSplitBytes, c.SplitBytes)))
		if k >= static {
			if s.Tasks.Of(st.ID).ScanTasks > 0 {
				s.Tasks.Edit(st.ID).ScanTasks = 0
				notes = append(notes, fmt.Sprintf("stage %d: back to one task per split", st.ID))
			}
			continue
		}
		if s.Tasks.Of(st.ID).ScanTasks == int(k) {
			continue
		}
		s.Tasks.Edit(st.ID).ScanTasks = int(k)
		notes = append(notes, fmt.Sprintf("stage %d: %d bytes of table data in %d tasks of about %d bytes (static splits: %d)",
			st.ID, bytes, k, ceilDiv(bytes, k), static))
	}
	return strings.Join(notes, "; "), nil
}

func ceilDiv(a, b int64) int64 {
	if b <= 0 {
		return a
	}
	return (a + b - 1) / b
}

// ScanStage reports whether st scans a table (its tasks are splits of the
// table's files).
func ScanStage(st *plan.Stage) bool { return st.Root != nil && scans(st.Root) }
