package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/coordinator/webui"
	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/adaptive"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// The read-only views of the web UI and of `sluice jobs show --json`,
// built from the job's records in Redis (so every coordinator replica
// serves the same view).

var _ webui.Source = (*Store)(nil)

// errorCode finds the stable code (SLnnn) an error message starts with or
// carries.
var errorCode = regexp.MustCompile(`\bSL\d{3}\b`)

// stageMention finds the stages a rule's note names ("stage 3", "stages
// 5 (probe side) and 6").
var stageMention = regexp.MustCompile(`\b(?:stages?|and)\s+(\d+)\b`)

// isCostField says whether a job or stage record field is a cost figure
// (S3 requests, bytes transferred, dollars) to show as is.
func isCostField(k string) bool {
	return strings.HasPrefix(k, "cost_") || strings.HasPrefix(k, "s3_") || k == "usd" || k == "dollars"
}

func costFields(m map[string]string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if isCostField(k) {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// costView is the job's cost report (sluice:{J}:cost) priced with the
// Store's price table, as fields for the web UI; nil when nothing was
// charged yet.
func (s *Store) costView(ctx context.Context, job string) map[string]string {
	c, err := s.Cost(ctx, job)
	if err != nil || (c.Invocations == 0 && c.S3 == objstore.RequestStats{}) {
		return nil
	}
	c.Price(s.Prices)
	r := c.S3
	return map[string]string{
		"s3_requests":      strconv.FormatInt(r.Get+r.Put+r.List+r.Delete+r.Head+r.Other, 10),
		"s3_get":           strconv.FormatInt(r.Get+r.Head, 10),
		"s3_put":           strconv.FormatInt(r.Put, 10),
		"s3_list":          strconv.FormatInt(r.List, 10),
		"s3_delete":        strconv.FormatInt(r.Delete, 10),
		"cost_invocations": strconv.FormatInt(c.Invocations, 10),
		"cost_gb_seconds":  strconv.FormatFloat(c.GBSeconds, 'f', 3, 64),
		"usd":              strconv.FormatFloat(c.Dollars, 'f', 6, 64),
	}
}

// costFields are the job record's own cost fields and its priced report.
func (v *jobView) costFields() map[string]string {
	out := maps.Clone(v.job.Cost)
	for k, val := range v.cost {
		if out == nil {
			out = map[string]string{}
		}
		out[k] = val
	}
	return out
}

// jobView is a job's records read in two round trips.
type jobView struct {
	cost   map[string]string // the cost report, priced (costView)
	job    *JobRecord
	graph  plan.Graph
	stages map[int]*StageRecord
	rounds []roundRecord
}

func (s *Store) readJobView(ctx context.Context, job string) (*jobView, error) {
	m, err := s.Job(ctx, job)
	if err != nil {
		return nil, err
	}
	v := &jobView{job: m, stages: map[int]*StageRecord{}, cost: s.costView(ctx, job)}
	g, err := m.Plan()
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", job, err)
	}
	v.graph = *g
	ids := stageIDs(&v.graph, nil)
	err = s.retry(ctx, "read job view", func() error {
		pipe := s.rdb.Pipeline()
		cmds := make([]*redis.MapStringStringCmd, len(ids))
		for i, id := range ids {
			cmds[i] = pipe.HGetAll(ctx, kStage(job, id))
		}
		rounds := pipe.LRange(ctx, kRounds(job), 0, -1)
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
		for i, id := range ids {
			v.stages[id] = decodeStage(cmds[i].Val())
		}
		v.rounds = v.rounds[:0]
		for _, r := range rounds.Val() {
			var rr roundRecord
			if json.Unmarshal([]byte(r), &rr) == nil {
				v.rounds = append(v.rounds, rr)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read job %s: %w", job, err)
	}
	return v, nil
}

// stageIDs returns the ids of g's stages and of the extra stages, sorted.
func stageIDs(g *plan.Graph, extra map[int]string) []int {
	seen := map[int]bool{}
	var ids []int
	for _, st := range g.Stages {
		if !seen[st.ID] {
			seen[st.ID] = true
			ids = append(ids, st.ID)
		}
	}
	for id := range extra {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	return ids
}

func (v *jobView) summary(id string, now time.Time) webui.JobSummary {
	m := v.job
	js := webui.JobSummary{ID: id, State: string(m.State), SQL: m.SQL, Error: m.Error, Adaptive: m.Adaptive,
		Created: m.Created, Finished: m.Finished, StageCount: len(v.graph.Stages), RoundCount: len(v.rounds), Cost: v.costFields()}
	js.Code = m.Code
	js.USD = -1
	if usd, err := strconv.ParseFloat(js.Cost["usd"], 64); err == nil {
		js.USD = usd
	}
	if m.State == StateRunning {
		js.Waiting = m.waiting()
	}
	if js.Code == "" && js.Error != "" {
		js.Code = errorCode.FindString(js.Error)
	}
	if c, err := time.Parse(time.RFC3339Nano, js.Created); err == nil {
		end := now
		if f, err := time.Parse(time.RFC3339Nano, js.Finished); err == nil {
			end = f
		}
		js.Seconds = end.Sub(c).Seconds()
	}
	for sid, sm := range v.stages {
		js.Invoked += sm.Attempts
		if sid != v.graph.Result {
			js.ShuffledBytes += sm.Bytes
		}
	}
	for _, r := range v.rounds {
		js.RulesFired += len(r.Fired)
	}
	return js
}

// JobSummaries returns up to n jobs, newest first, for the jobs list.
func (s *Store) JobSummaries(ctx context.Context, n int64) ([]webui.JobSummary, error) {
	ids, err := s.Jobs(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	now := time.Now()
	out := make([]webui.JobSummary, 0, len(ids))
	for _, id := range ids {
		v, err := s.readJobView(ctx, id)
		if errors.Is(err, ErrJobNotFound) {
			continue // expired or deleted since listed
		}
		if err != nil {
			return nil, err
		}
		out = append(out, v.summary(id, now))
	}
	return out, nil
}

// JobDetail returns everything the job page shows: the plan now and after
// every round, the stages with their task-duration quantiles and shuffle
// objects, and every task's attempts.
func (s *Store) JobDetail(ctx context.Context, job string) (*webui.JobDetail, error) {
	v, err := s.readJobView(ctx, job)
	if errors.Is(err, ErrJobNotFound) {
		return nil, fmt.Errorf("%w: %w", webui.ErrNotFound, err)
	}
	if err != nil {
		return nil, err
	}
	now := time.Now()
	d := &webui.JobDetail{JobSummary: v.summary(job, now), Columns: v.graph.Columns, Explain: v.job.Explain, Now: now.UnixMilli()}
	finished := Terminal(d.State)

	// Tasks of every stage that started, one round trip.
	ids := stageIDs(&v.graph, nil)
	type key struct{ stage, task int }
	var keys []key
	for _, id := range ids {
		for t := 0; t < v.stages[id].Tasks; t++ {
			keys = append(keys, key{id, t})
		}
	}
	taskRecs := make([]*TaskRecord, len(keys))
	if len(keys) > 0 {
		err = s.retry(ctx, "read tasks", func() error {
			pipe := s.rdb.Pipeline()
			cmds := make([]*redis.MapStringStringCmd, len(keys))
			for i, k := range keys {
				cmds[i] = pipe.HGetAll(ctx, kTask(job, k.stage, k.task))
			}
			if _, err := pipe.Exec(ctx); err != nil {
				return err
			}
			for i := range keys {
				taskRecs[i] = decodeTask(cmds[i].Val())
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read tasks of job %s: %w", job, err)
		}
	}
	durations := map[int][]float64{}
	peak := map[int]int64{}
	committed := map[int][]*function.TaskResult{} // by stage, for the metrics
	inBytes, outBytes := map[int][]int64{}, map[int][]int64{}
	for i, k := range keys {
		t, dur, pk := taskView(k.stage, k.task, taskRecs[i], finished || v.stages[k.stage].State != StageRunning)
		if res := committedResultOf(taskRecs[i]); res != nil {
			committed[k.stage] = append(committed[k.stage], res)
			if !res.NotInvoked {
				inBytes[k.stage] = append(inBytes[k.stage], res.InputBytes)
				outBytes[k.stage] = append(outBytes[k.stage], res.Bytes)
			}
			t.InputRows, t.InputBytes, t.Rows, t.Bytes = res.InputRows, res.InputBytes, res.Rows, res.Bytes
			t.SpillBytes, t.PeakMemory = res.SpillBytes, max(pk, res.PeakMemoryBytes)
			t.Seconds = max(dur, 0)
		}
		d.Tasks = append(d.Tasks, t)
		if dur >= 0 {
			durations[k.stage] = append(durations[k.stage], dur)
		}
		peak[k.stage] = max(peak[k.stage], pk)
	}
	sort.SliceStable(d.Tasks, func(i, j int) bool { return firstOpen(d.Tasks[i]) < firstOpen(d.Tasks[j]) })

	// Stages, in id order.
	for _, id := range ids {
		sm := v.stages[id]
		st := v.graph.Stage(id)
		row := webui.Stage{ID: id, State: displayState(sm, d.State), Reason: sm.Reason, Output: plan.FormatPartitioning(st.Output, st.Root), Cost: sm.Cost,
			Tasks: sm.Tasks, TasksDone: sm.Done, Invoked: sm.Invoked, Attempts: sm.Attempts, Retries: sm.Failures,
			Rows: sm.Rows, Bytes: sm.Bytes, InputRows: sm.InputRows, InputBytes: sm.InputBytes, Seconds: sm.Seconds}
		row.P50, row.P90, row.Max = quantiles(durations[id])
		row.PeakMemory = peak[id]
		row.InputQ, row.OutputQ = byteQuantiles(inBytes[id]), byteQuantiles(outBytes[id])
		metricsView(&row, st.Root, committed[id])
		if sm.HasOutput() {
			if out, err := s.StageOutput(ctx, job, id, sm); err == nil {
				row.Objects = objectsView(out.objectsByPart())
			}
		}
		d.Stages = append(d.Stages, row)
	}

	// The plan now, with live states, and round by round.
	plansNow, _ := v.job.TaskPlans()
	tasksNow := plansNow.Counts()
	submitted := v.job.SubmittedPlan()
	d.Graph = graphView(&v.graph, submitted, func(id int) (string, string, int, int) {
		sm := v.stages[id]
		n := sm.Tasks
		if n == 0 {
			n = tasksNow[id]
		}
		return displayState(sm, d.State), sm.Reason, n, sm.Done
	})
	if d.State == string(StateRunning) {
		for _, m := range heldStage.FindAllStringSubmatch(v.job.Held, -1) {
			id, _ := strconv.Atoi(m[1])
			for i := range d.Graph.Stages {
				if gs := &d.Graph.Stages[i]; gs.ID == id && gs.State == string(StagePending) {
					gs.Held = true
				}
			}
		}
	}
	d.Settings = v.job.Settings()
	var prev *webui.Round
	if g := submitted; g != nil {
		tasks := adaptive.InitialTaskPlans(g).Counts()
		r0 := webui.Round{Round: 0, Graph: graphView(g, nil, roundStates(nil, nil, tasks)), Plan: v.job.Explain}
		d.Rounds = append(d.Rounds, r0)
		prev = &d.Rounds[0]
	}
	for _, rr := range v.rounds {
		r := webui.Round{Round: rr.Round.Round, After: rr.After, Plan: rr.PlanAfter}
		for _, f := range rr.Fired {
			r.Fired = append(r.Fired, webui.Fired{Rule: f.Rule, Note: f.Note, Stages: mentionedStages(f.Note)})
		}
		if rr.Graph != nil {
			r.Graph = graphView(rr.Graph, submitted, roundStates(rr.After, rr.Skipped, rr.Tasks))
			if prev != nil && prev.Graph != nil {
				r.Changes = graphChanges(prev.Graph, r.Graph)
			}
		}
		d.Rounds = append(d.Rounds, r)
		prev = &d.Rounds[len(d.Rounds)-1]
	}
	return d, nil
}

// displayState is the state a stage is shown in: a stage skipped after
// it started (its tasks were cancelled) is "cancelled", and so is a stage
// left running or pending by a job that failed or was cancelled.
func displayState(sm *StageRecord, jobState string) string {
	st := sm.StateOrPending()
	n := sm.Tasks
	switch {
	case st == StageSkipped && n > 0:
		return "cancelled"
	case (st == StageRunning || st == StagePending) && (JobState(jobState) == StateFailed || JobState(jobState) == StateCancelled):
		if st == StageRunning {
			return "cancelled"
		}
		return string(StagePending)
	}
	return string(st)
}

// roundStates gives the stages of a round's plan their state as of that
// round: done when finished before it, skipped when the plan skips them,
// pending otherwise.
func roundStates(after []int, skipped map[int]string, tasks map[int]int) func(int) (string, string, int, int) {
	done := map[int]bool{}
	for _, id := range after {
		done[id] = true
	}
	return func(id int) (string, string, int, int) {
		if why, ok := skipped[id]; ok {
			return string(StageSkipped), why, 0, 0
		}
		if done[id] {
			return string(StageDone), "", tasks[id], tasks[id]
		}
		return string(StagePending), "", tasks[id], 0
	}
}

// graphView draws g: one node per stage, naming its tables and main
// operators, one edge per exchange labelled with the partitioning it
// carries. A stage the re-planner emptied (inlined into its readers,
// fused, skipped) is named from its fragment in the submitted plan
// (orig; nil: as it stands).
func graphView(g *plan.Graph, orig *plan.Graph, state func(id int) (state, reason string, tasks, done int)) *webui.Graph {
	out := &webui.Graph{Result: g.Result}
	for _, st := range g.Stages {
		s, why, n, done := state(st.ID)
		root := st.Root
		if orig != nil && emptied(root) && orig.Stage(st.ID) != nil {
			root = orig.Stage(st.ID).Root
		}
		main, tables := stageWork(root)
		out.Stages = append(out.Stages, webui.GraphStage{ID: st.ID, Ops: opsText(root), Main: main, Tables: tables,
			Output: plan.FormatPartitioning(st.Output, st.Root), Tasks: n, Done: done, State: s, Reason: why})
		whole := map[int]bool{}
		plan.Walk(st.Root, func(n *plan.Node) {
			if n.Kind == plan.KindExchange && n.Whole {
				whole[n.Stage] = true
			}
		})
		for _, in := range st.Inputs {
			label := "?"
			if src := g.Stage(in); src != nil {
				label = plan.FormatPartitioning(src.Output, src.Root)
			}
			out.Edges = append(out.Edges, webui.Edge{From: in, To: st.ID, Label: label, Whole: whole[in]})
		}
	}
	return out
}

// emptied reports whether a fragment reads nothing (every leaf is an
// empty relation): what the re-planner leaves of a stage it removed.
func emptied(root *plan.Node) bool {
	if root == nil {
		return true
	}
	if len(root.Inputs) == 0 {
		return root.Kind == plan.KindEmpty
	}
	for _, c := range root.Inputs {
		if !emptied(c) {
			return false
		}
	}
	return true
}

// opWeight ranks the operators that name a stage's work; the others
// (filters, projections, leaves) never do.
var opWeight = map[plan.Kind]int{plan.KindWrite: 9, plan.KindHashJoin: 8, plan.KindCrossJoin: 8, plan.KindWindow: 7,
	plan.KindAggregate: 6, plan.KindSort: 5, plan.KindUnion: 4, plan.KindLimit: 3, plan.KindExpand: 2}

// stageWork names a fragment's work: its two weightiest operators in the
// order data flows through them ("hash join → agg partial"), or "scan" /
// "read" / "values" for a fragment that only reads; and the tables its
// scans read, in plan order.
func stageWork(root *plan.Node) (string, []string) {
	type op struct {
		text       string
		weight, at int
	}
	var ops []op
	var tables []string
	var leaves []string
	seen := map[string]bool{}
	i := 0
	plan.Walk(root, func(n *plan.Node) {
		i++
		switch n.Kind {
		case plan.KindScan:
			if n.Scan != nil && !seen[n.Scan.Table] {
				seen[n.Scan.Table] = true
				tables = append(tables, n.Scan.Table)
			}
			leaves = append(leaves, "scan")
		case plan.KindExchange:
			leaves = append(leaves, "read")
		case plan.KindValues:
			leaves = append(leaves, "values")
		}
		if w := opWeight[n.Kind]; w > 0 {
			ops = append(ops, op{opWord(n), w, i})
		}
	})
	sort.SliceStable(ops, func(a, b int) bool { return ops[a].weight > ops[b].weight })
	if len(ops) > 2 {
		ops = ops[:2]
	}
	// Pre-order puts a parent first; data flows from the leaves up.
	sort.Slice(ops, func(a, b int) bool { return ops[a].at > ops[b].at })
	var words []string
	for _, o := range ops {
		if len(words) == 0 || words[len(words)-1] != o.text {
			words = append(words, o.text)
		}
	}
	if len(words) == 0 {
		switch {
		case slices.Contains(leaves, "scan"):
			words = []string{"scan"}
		case slices.Contains(leaves, "read"):
			words = []string{"repartition"}
		case len(leaves) > 0:
			words = []string{leaves[0]}
		default:
			words = []string{"empty"}
		}
	}
	return strings.Join(words, " → "), tables
}

// opWord is an operator's name on a graph node.
func opWord(n *plan.Node) string {
	switch n.Kind {
	case plan.KindHashJoin:
		if n.Join != nil && n.Join.Type != "" && n.Join.Type != plan.JoinInner {
			return string(n.Join.Type) + " join"
		}
		return "hash join"
	case plan.KindAggregate:
		if n.Aggregate != nil && n.Aggregate.Mode != "" && n.Aggregate.Mode != plan.AggSingle {
			return "agg " + string(n.Aggregate.Mode)
		}
		return "aggregate"
	case plan.KindSort:
		if n.Limit >= 0 {
			return "top-k"
		}
	}
	return strings.ReplaceAll(string(n.Kind), "_", " ")
}

// opsText lists a fragment from its root down, one word per operator
// that matters (filters and projections left out).
func opsText(root *plan.Node) string {
	var parts []string
	var walk func(n *plan.Node)
	walk = func(n *plan.Node) {
		if n == nil {
			return
		}
		switch n.Kind {
		case plan.KindFilter, plan.KindProject:
		case plan.KindScan:
			if n.Scan != nil {
				parts = append(parts, "scan "+n.Scan.Table)
			}
		case plan.KindExchange:
			parts = append(parts, "read s"+strconv.Itoa(n.Stage))
		default:
			parts = append(parts, opWord(n))
		}
		for _, c := range n.Inputs {
			walk(c)
		}
	}
	walk(root)
	return strings.Join(parts, " ← ")
}

// objectsView lists a stage's output objects once each, with the
// partitions each holds: a task's data object is one object however many
// partition ranges it has.
func objectsView(byPart map[int][]shuffle.ObjectRef) []webui.Object {
	idx := map[string]int{}
	var out []webui.Object
	parts := slices.Sorted(maps.Keys(byPart))
	for _, p := range parts {
		for _, ref := range byPart[p] {
			i, ok := idx[ref.Key]
			if !ok {
				i = len(out)
				idx[ref.Key] = i
				out = append(out, webui.Object{Key: ref.Key})
			}
			o := &out[i]
			o.Partitions = append(o.Partitions, p)
			o.Bytes += ref.Bytes
			o.Rows += ref.Rows
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Key < out[b].Key })
	return out
}

// byteQuantiles returns min, p25, p50, p75 and max of vs (nil when
// empty).
func byteQuantiles(vs []int64) *webui.Quantiles {
	if len(vs) == 0 {
		return nil
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	var q webui.Quantiles
	for i, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		r := int(math.Ceil(f*float64(len(s)))) - 1
		q[i] = s[min(max(r, 0), len(s)-1)]
	}
	return &q
}

// graphChanges says, by stage, what cur changed against prev.
func graphChanges(prev, cur *webui.Graph) map[int][]string {
	out := map[int][]string{}
	before := map[int]webui.GraphStage{}
	for _, s := range prev.Stages {
		before[s.ID] = s
	}
	inputs := func(g *webui.Graph) map[int][]int {
		m := map[int][]int{}
		for _, e := range g.Edges {
			m[e.To] = append(m[e.To], e.From)
		}
		return m
	}
	inPrev, inCur := inputs(prev), inputs(cur)
	now := map[int]bool{}
	for _, s := range cur.Stages {
		now[s.ID] = true
		b, ok := before[s.ID]
		switch {
		case !ok:
			out[s.ID] = append(out[s.ID], "added")
			continue
		case s.State == string(StageSkipped) && b.State != string(StageSkipped):
			out[s.ID] = append(out[s.ID], "skipped ("+s.Reason+")")
			continue
		}
		if s.Output != b.Output {
			out[s.ID] = append(out[s.ID], "output "+b.Output+" → "+s.Output)
		}
		if a, c := fmt.Sprint(inPrev[s.ID]), fmt.Sprint(inCur[s.ID]); a != c {
			out[s.ID] = append(out[s.ID], "inputs "+a+" → "+c)
		}
		if s.Ops != b.Ops {
			out[s.ID] = append(out[s.ID], "fragment rewritten")
		}
		switch {
		case b.Tasks > 0 && s.Tasks > 0 && b.Tasks != s.Tasks && s.State == string(StagePending):
			out[s.ID] = append(out[s.ID], fmt.Sprintf("tasks %d → %d", b.Tasks, s.Tasks))
		case b.Tasks == 0 && s.Tasks > 0 && s.State == string(StagePending):
			// A scan stage (one task per split) that size-scans sized.
			out[s.ID] = append(out[s.ID], fmt.Sprintf("tasks one per split → %d", s.Tasks))
		}
	}
	for id := range before {
		if !now[id] {
			out[id] = append(out[id], "removed")
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func mentionedStages(note string) []int {
	var out []int
	seen := map[int]bool{}
	for _, m := range stageMention.FindAllStringSubmatch(note, -1) {
		id, err := strconv.Atoi(m[1])
		if err == nil && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// taskView reads a task record: its attempts with their times and
// outcomes, the duration of its committed attempt in seconds (-1 when not
// committed) and the peak memory its result reported. settled says the
// task's stage is no longer running (attempts without an outcome were
// cancelled).
func taskView(stage, task int, m *TaskRecord, settled bool) (webui.Task, float64, int64) {
	t := webui.Task{Stage: stage, Task: task, State: string(m.State), Error: m.Error, Committed: m.Committed}
	if t.State == "" {
		t.State = string(TaskPending)
	}
	for a := 1; a <= m.Attempts; a++ {
		at := webui.Attempt{Attempt: a, Open: m.Open(a)}
		if invoked, end, outcome, ok := m.End(a); ok {
			at.Invoked, at.End, at.Outcome = invoked, end, outcome
		}
		if at.Outcome == "" {
			switch {
			case t.Committed == a:
				at.Outcome = "committed" // committed by a coordinator that did not record times
			case t.Committed != 0 || settled:
				at.Outcome = "cancelled"
			default:
				at.Outcome = "running"
			}
		}
		if at.Outcome == "cancelled" && at.End == 0 {
			at.End = cancelledAt(m, t.Committed)
		}
		t.Attempts = append(t.Attempts, at)
	}
	// A duplicate started while an earlier attempt still ran is a hedge.
	// Times are in ms: an earlier attempt ending the same ms counts as
	// still running unless it failed (a retry follows only a failure).
	for i := range t.Attempts {
		for j := 0; j < i; j++ {
			p, a := t.Attempts[j], t.Attempts[i]
			if p.Open == 0 || a.Open == 0 || p.Open > a.Open {
				continue
			}
			failed := p.Outcome == "retrying" || p.Outcome == "failed" || p.Outcome == "input_lost"
			if p.End == 0 || p.End > a.Open || (p.End == a.Open && !failed) {
				t.Attempts[i].Hedge = true
			}
		}
	}
	dur := -1.0
	var peak int64
	if t.Committed > 0 {
		if c := t.Attempts[min(t.Committed, len(t.Attempts))-1]; c.End > 0 && c.Invoked > 0 {
			dur = float64(c.End-c.Invoked) / 1000
		}
		if res := m.ResultFields(); res != nil {
			if dur < 0 {
				if s, ok := res["seconds"].(float64); ok {
					dur = s
				}
			}
			for _, k := range []string{"peak_memory", "peak_memory_bytes", "peak_bytes"} {
				if v, ok := res[k].(float64); ok {
					peak = max(peak, int64(v))
				}
			}
		}
	}
	return t, dur, peak
}

// cancelledAt is when an attempt with no outcome stopped, as near as the
// record tells: when the winning attempt committed (0: unknown).
func cancelledAt(m *TaskRecord, committed int) int64 {
	if committed == 0 {
		return 0
	}
	_, end, _, _ := m.End(committed)
	return end
}

func firstOpen(t webui.Task) int64 {
	for _, a := range t.Attempts {
		if a.Open != 0 {
			return a.Open
		}
	}
	return 1 << 62
}

// quantiles returns the p50, p90 and max of ds (nearest rank).
func quantiles(ds []float64) (p50, p90, mx float64) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	s := append([]float64(nil), ds...)
	sort.Float64s(s)
	rank := func(q float64) float64 {
		i := int(q*float64(len(s))+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return rank(0.5), rank(0.9), s[len(s)-1]
}
