package webui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Sizes of the stage graph drawing, in SVG user units.
const (
	nodeW   = 204
	nodeH   = 84
	layerDX = nodeW + 180 // from one layer's left edge to the next one's: room for an edge label
	rowDY   = nodeH + 30
	margin  = 16
	// Characters that fit an edge label (11 px monospace, 6.6 px a
	// character).
	labelChars = 25
)

// svgGraph is a stage graph laid out for drawing: stages in layers from
// left (scans) to right (the result), edges as curves with their labels.
type svgGraph struct {
	W, H  int
	Nodes []svgNode
	Edges []svgEdge
	// Labels name what each stage sends (its output partitioning), once
	// per stage, next to where its edges leave it.
	Labels []svgLabel
}

type svgNode struct {
	X, Y    int
	W, H    int
	Stage   GraphStage
	Result  bool
	Changed []string // what the round changed in this stage (highlighted)
	Reads   string   // the stages it reads ("reads s0, s2")
}

type svgEdge struct {
	From, To int
	Path     string
	NX, NY   int    // where the note goes (right-aligned, near the target)
	Note     string // "read whole"
	Label    string // the partitioning (the tooltip; drawn once per source)
	Changed  bool
	// Moved is set on the dashed edge from a stage the re-planner removed
	// to the stage its work moved into ("inlined", "fused").
	Moved string
}

type svgLabel struct {
	Stage int
	X, Y  int
	Text  string // cut to fit
	Full  string
}

// layoutGraph places every stage in the layer of its longest path from a
// source stage; stages within a layer keep their id order, each layer
// centred vertically. An edge leaves its source at the middle of its
// right side and arrives at its own port on the target's left side, so
// converging edges do not meet; the partitioning is written once per
// source above where its edges leave, a "read whole" note below the
// edge's arrival. changes marks stages to highlight.
func layoutGraph(g *Graph, changes map[int][]string) *svgGraph {
	if g == nil || len(g.Stages) == 0 {
		return &svgGraph{W: 2 * margin, H: 2 * margin}
	}
	edges := append(append([]Edge(nil), g.Edges...), movedEdges(g)...)
	inputs := map[int][]int{}
	for _, e := range edges {
		inputs[e.To] = append(inputs[e.To], e.From)
	}
	layer := map[int]int{}
	var depth func(id int, seen map[int]bool) int
	depth = func(id int, seen map[int]bool) int {
		if l, ok := layer[id]; ok {
			return l
		}
		if seen[id] {
			return 0 // a cycle (not a valid plan): draw it anyway
		}
		seen[id] = true
		l := 0
		for _, in := range inputs[id] {
			l = max(l, depth(in, seen)+1)
		}
		layer[id] = l
		return l
	}
	ids := make([]int, 0, len(g.Stages))
	byID := map[int]GraphStage{}
	for _, s := range g.Stages {
		ids = append(ids, s.ID)
		byID[s.ID] = s
	}
	sort.Ints(ids)
	nLayers := 0
	for _, id := range ids {
		nLayers = max(nLayers, depth(id, map[int]bool{})+1)
	}
	// A stage with no inputs stands just left of its first reader, not in
	// the first layer, so that its edge crosses no other layer (a small
	// table's scan feeding a late join; a fused stage).
	for _, id := range ids {
		if len(inputs[id]) > 0 {
			continue
		}
		to := -1
		for _, e := range edges {
			if e.From == id && (to < 0 || layer[e.To] < to) {
				to = layer[e.To]
			}
		}
		if to > 0 {
			layer[id] = to - 1
		}
	}
	layers := make([][]int, nLayers)
	for _, id := range ids {
		layers[layer[id]] = append(layers[layer[id]], id)
	}
	maxRows := 0
	for _, l := range layers {
		maxRows = max(maxRows, len(l))
	}
	out := &svgGraph{W: 2*margin + (nLayers-1)*layerDX + nodeW, H: 2*margin + (maxRows-1)*rowDY + nodeH + 14}
	pos := map[int][2]int{}
	for li, l := range layers {
		top := margin + (maxRows-len(l))*rowDY/2
		for ri, id := range l {
			x, y := margin+li*layerDX, top+ri*rowDY
			pos[id] = [2]int{x, y}
			var reads []string
			for _, e := range g.Edges {
				if e.To == id {
					reads = append(reads, "s"+strconv.Itoa(e.From))
				}
			}
			rd := ""
			if len(reads) > 0 {
				rd = "reads " + strings.Join(reads, ", ")
			}
			out.Nodes = append(out.Nodes, svgNode{X: x, Y: y, W: nodeW, H: nodeH, Stage: byID[id],
				Result: id == g.Result, Changed: changes[id], Reads: rd})
		}
	}
	// Ports: the i-th of a target's n inputs arrives at height
	// (i+1)/(n+1) of its left side, inputs in the order of their sources'
	// heights so that edges do not cross at the target.
	ins := map[int][]Edge{}
	for _, e := range edges {
		ins[e.To] = append(ins[e.To], e)
	}
	port := map[[2]int]int{}
	for to, es := range ins {
		sort.SliceStable(es, func(i, j int) bool { return pos[es[i].From][1] < pos[es[j].From][1] })
		for i, e := range es {
			port[[2]int{e.From, to}] = (i + 1) * nodeH / (len(es) + 1)
		}
	}
	labelled := map[int]bool{}
	for _, e := range edges {
		a, okA := pos[e.From]
		b, okB := pos[e.To]
		if !okA || !okB {
			continue
		}
		x1, y1 := a[0]+nodeW, a[1]+nodeH/2
		x2, y2 := b[0], b[1]+port[[2]int{e.From, e.To}]
		mx := x1 + (x2-x1)/2
		out.Edges = append(out.Edges, svgEdge{From: e.From, To: e.To,
			Path: fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, mx, y1, mx, y2, x2-6, y2),
			NX:   x2 - 8, NY: y2 + 14, Note: wholeNote(e.Whole), Label: e.Label, Moved: e.moved,
			Changed: len(changes[e.To]) > 0 && len(changes[e.From]) > 0})
		if e.moved != "" {
			out.Edges[len(out.Edges)-1].Note = e.moved
			continue // a stage that does not run sends nothing
		}
		if !labelled[e.From] {
			// Above where the edges leave, unless the first one climbs:
			// then below, off its curve.
			labelled[e.From] = true
			ly := y1 - 6
			if y2 < y1 {
				ly = y1 + 15
			}
			out.Labels = append(out.Labels, svgLabel{Stage: e.From, X: x1 + 6, Y: ly, Text: fitText(labelChars, e.Label), Full: e.Label})
		}
	}
	return out
}

// movedEdges are edges from each stage whose work moved into others
// (skipped "inlined into stage 2,3", "fused into stage 4") to those
// stages: drawn dashed, and laid out as inputs, so that an inlined scan
// stands left of the stage reading its table.
func movedEdges(g *Graph) []Edge {
	var out []Edge
	have := map[int]bool{}
	for _, s := range g.Stages {
		have[s.ID] = true
	}
	for _, s := range g.Stages {
		if s.State != "skipped" {
			continue
		}
		var how, rest string
		for _, w := range []string{"inlined", "fused"} {
			if r, ok := strings.CutPrefix(s.Reason, w+" into stage "); ok {
				how, rest = w, r
			}
		}
		if how == "" {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if to, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && have[to] && to != s.ID {
				out = append(out, Edge{From: s.ID, To: to, Label: how + " into stage " + strconv.Itoa(to), moved: how})
			}
		}
	}
	return out
}

// fitText cuts s to n characters, the last one "…".
func fitText(n int, s string) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// svgTimeline is the task timeline laid out for drawing: one row per task,
// one bar per attempt (a light part while queued, a solid part while its
// function ran), on a common time axis.
type svgTimeline struct {
	W, H  int
	Left  int // width of the row labels
	Rows  []tlRow
	Ticks []tlTick
	Span  float64 // seconds from the first attempt opened to the last end
}

type tlRow struct {
	Y     int
	Label string
	Stage int
	Task  int
	Bars  []tlBar
}

type tlBar struct {
	Attempt     Attempt
	QX, QW      int // queued part
	X, W        int // running part
	Title       string
	Stage, Task int
	Y           int
}

type tlTick struct {
	X     int
	Label string
}

const (
	tlWidth = 1200
	tlLeft  = 86
	tlRowH  = 16
	tlTop   = 22
)

// layoutTimeline draws tasks' attempts between the first open time and
// the last end (now for attempts still running).
func layoutTimeline(tasks []Task, now int64) *svgTimeline {
	var t0, t1 int64
	for _, t := range tasks {
		for _, a := range t.Attempts {
			if a.Open == 0 {
				continue
			}
			if t0 == 0 || a.Open < t0 {
				t0 = a.Open
			}
			t1 = max(t1, a.Open, a.Invoked, endOf(a, now))
		}
	}
	out := &svgTimeline{W: tlWidth, Left: tlLeft}
	if t0 == 0 {
		out.H = tlTop
		return out
	}
	span := max(t1-t0, 1)
	out.Span = float64(span) / 1000
	scale := func(ms int64) int { return tlLeft + int(float64(ms-t0)/float64(span)*float64(tlWidth-tlLeft-8)) }
	step := tickStep(span)
	for ms := int64(0); ms <= span; ms += step {
		out.Ticks = append(out.Ticks, tlTick{X: scale(t0 + ms), Label: strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + "s"})
	}
	y := tlTop
	for _, t := range tasks {
		row := tlRow{Y: y, Label: fmt.Sprintf("s%d t%d", t.Stage, t.Task), Stage: t.Stage, Task: t.Task}
		for _, a := range t.Attempts {
			if a.Open == 0 {
				continue
			}
			inv := a.Invoked
			if inv == 0 {
				// Not known until the attempt ends (running, or cancelled
				// without an outcome): drawn as running from its open.
				inv = a.Open
			}
			end := endOf(a, now)
			qx, x := scale(a.Open), scale(inv)
			b := tlBar{Attempt: a, QX: qx, QW: max(x-qx, 0), X: x, W: max(scale(end)-x, 2), Stage: t.Stage, Task: t.Task, Y: y}
			b.Title = fmt.Sprintf("stage %d task %d attempt %d: %s", t.Stage, t.Task, a.Attempt, a.Outcome)
			if a.Hedge {
				b.Title += " (hedge)"
			}
			b.Title += fmt.Sprintf(", queued %.3fs, ran %.3fs", float64(inv-a.Open)/1000, float64(end-inv)/1000)
			row.Bars = append(row.Bars, b)
		}
		out.Rows = append(out.Rows, row)
		y += tlRowH
	}
	out.H = y + 4
	return out
}

func endOf(a Attempt, now int64) int64 {
	if a.End != 0 {
		return a.End
	}
	return max(now, a.Invoked, a.Open)
}

// tickStep picks a round axis step giving 5 to 12 ticks.
func tickStep(span int64) int64 {
	for _, s := range []int64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 30000, 60000, 120000, 300000, 600000, 1800000, 3600000} {
		if span/s <= 10 {
			return s
		}
	}
	return span / 10
}

func wholeNote(whole bool) string {
	if whole {
		return "read whole"
	}
	return ""
}
