package adaptive

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicedb/sluice/planner/plan"
)

// MaxInlineFiles is the most files a table inline-scans inlines may have
// (their list travels in the readers' plan fragment).
const MaxInlineFiles = 64

// InlineScans runs the scan of a small broadcast table inside the stages
// that read it, instead of as a stage of its own: Starling's rule that
// small tables are read directly by every task that needs them rather
// than shuffled.
//
// Trigger: a pending stage S that has no inputs and is a scan with only
// filters and projections above it, whose output every reader reads
// whole (broadcast or single), whose table the driver measured small
// enough to list (State.Scans: at most MaxInlineFiles files), and whose
// readers are all pending with a known task count, and that no runtime
// filter waits for its summary (plan.Stage.Summarize: a join build side
// whose probe scan is big, see RuntimeFilter); and the bytes the
// readers would read again, the table's bytes times their tasks, are at
// most Config.InlineScanBytes.
//
// Rewrite: in each reader, the exchange leaves reading S become copies of
// S's fragment whose scan is Inline with the table's files; S is skipped
// ("inlined into stage ..."). The job saves S's invocation, its upload
// and commit, and every reader task's GET of S's output; each reader task
// reads the table's files instead.
//
// Safe because S's fragment is a function of the table's files alone
// (scan, filter, project: no input, no state, no limit), so a reader
// task that evaluates it over all the files gets exactly the rows S's
// tasks would have written and it would have read whole.
type InlineScans struct{}

func (InlineScans) Name() string { return "inline-scans" }

func (InlineScans) Apply(s *State) (string, error) {
	if s.Config.InlineScanBytes <= 0 {
		return "", nil
	}
	var notes []string
	for _, st := range slices.Clone(s.Graph.Stages) {
		size, ok := s.inlinable(st)
		if !ok {
			continue
		}
		readers := s.Graph.Consumers(st.ID)
		var tasks int64
		for _, id := range readers {
			n, known := s.taskCount(s.Graph.Stage(id))
			if !known {
				tasks = -1
				break
			}
			tasks += n
		}
		if tasks <= 0 || size.Bytes*tasks > s.Config.InlineScanBytes {
			continue
		}
		for _, id := range readers {
			r := s.Graph.Stage(id)
			var err error
			r.Root = replaceExchange(r.Root, st.ID, func() *plan.Node {
				var frag *plan.Node
				if frag, err = inlineFragment(st.Root, size.Files); err != nil {
					return &plan.Node{Kind: plan.KindExchange, Stage: st.ID} // discarded with the error
				}
				return frag
			})
			if err != nil {
				return "", err
			}
			r.Inputs = slices.DeleteFunc(slices.Clone(r.Inputs), func(in int) bool { return in == st.ID })
			if len(r.Inputs) == 0 {
				s.Tasks.Edit(r.ID).Groups = nil
			}
		}
		st.Root = &plan.Node{Kind: plan.KindEmpty, Schema: st.Root.Schema, Limit: -1}
		ids := make([]string, len(readers))
		for i, id := range readers {
			ids[i] = fmt.Sprint(id)
		}
		s.skip(st.ID, "inlined into stage "+strings.Join(ids, ","))
		notes = append(notes, fmt.Sprintf("stage %d (%d bytes in %d files) is read by stage %s's %d tasks directly: %d bytes read again, no stage of its own",
			st.ID, size.Bytes, len(size.Files), strings.Join(ids, ","), tasks, size.Bytes*tasks))
	}
	return strings.Join(notes, "; "), nil
}

// inlinable returns the measure of S's table when S may be inlined into
// its readers (all but the cost).
func (s *State) inlinable(st *plan.Stage) (ScanSize, bool) {
	size, measured := s.Scans[st.ID]
	if !measured || size.Files == nil && size.Bytes > 0 || !s.Pending(st.ID) || st.ID == s.Graph.Result || len(st.Summarize) > 0 ||
		len(st.Inputs) > 0 || st.Root == nil || st.Output.Kind == plan.PartitionHash {
		return ScanSize{}, false
	}
	scansFound, ok := 0, true
	plan.Walk(st.Root, func(n *plan.Node) {
		switch n.Kind {
		case plan.KindScan:
			scansFound++
			ok = ok && n.SplitScan()
		case plan.KindFilter, plan.KindProject:
		default:
			ok = false
		}
	})
	if !ok || scansFound != 1 {
		return ScanSize{}, false
	}
	readers := s.Graph.Consumers(st.ID)
	if len(readers) == 0 {
		return ScanSize{}, false
	}
	for _, id := range readers {
		if !s.Pending(id) || s.Tasks.Of(id).Combine > 0 {
			return ScanSize{}, false
		}
	}
	return size, true
}

// taskCount is how many tasks pending stage st will run, when the state
// knows: its scan's count (size-scans' or the static splits'), or its
// partition groups and skew tasks.
func (s *State) taskCount(st *plan.Stage) (int64, bool) {
	if scans(st.Root) {
		return s.scanTasks(st.ID) // combine.go
	}
	if tp := s.Tasks.Of(st.ID); tp.Groups != nil {
		return int64(len(tp.Groups) + len(tp.Skew)), true
	}
	return 0, false
}

// inlineFragment returns a copy of S's fragment with its scan Inline over
// files.
func inlineFragment(root *plan.Node, files []plan.ScanFile) (*plan.Node, error) {
	frag, err := root.Clone()
	if err != nil {
		return nil, fmt.Errorf("inline-scans: %w", err)
	}
	if files == nil {
		files = []plan.ScanFile{}
	}
	plan.Walk(frag, func(n *plan.Node) {
		if n.Kind == plan.KindScan {
			n.Scan.Inline, n.Scan.Files = true, slices.Clone(files)
		}
	})
	return frag, nil
}
