package plan

import "slices"

// ElideGather drops a result stage that only gathers another stage's
// rows: its root is a bare exchange leaf (not a broadcast read)
// of a stage with a single output that nothing else reads. That stage
// becomes the result, and its tasks' output objects are the result, read
// in task order, so a query with no final sort, limit or aggregate
// (SELECT ... FROM t WHERE ..., a join's rows) does not copy all its
// rows through one task before the client sees them. It returns whether
// it changed g.
func (g *Graph) ElideGather() bool {
	res := g.Stage(g.Result)
	if res == nil || res.Root == nil {
		return false
	}
	r := res.Root
	if r.Kind != KindExchange || r.Whole || r.SplitObjects || len(res.Inputs) != 1 {
		return false
	}
	up := g.Stage(r.Stage)
	if up == nil || up.Root == nil || up.Output.Kind != PartitionSingle {
		return false
	}
	if c := g.Consumers(up.ID); len(c) != 1 || c[0] != res.ID {
		return false
	}
	if !sameSchema(up.Root.Schema, r.Schema) {
		return false
	}
	g.Stages = slices.DeleteFunc(g.Stages, func(s *Stage) bool { return s == res })
	g.Result = up.ID
	g.renumber()
	return true
}

// Gather adds a result stage that reads the current result stage through
// a single exchange, so that the result is produced by one task (a write
// to one named file needs that). It is ElideGather's inverse.
func (g *Graph) Gather() {
	res := g.Stage(g.Result)
	id := 0
	for _, s := range g.Stages {
		id = max(id, s.ID+1)
	}
	leaf := &Node{Kind: KindExchange, Schema: append(Schema(nil), res.Root.Schema...), Stage: res.ID}
	g.Stages = append(g.Stages, &Stage{ID: id, Root: leaf, Output: Partitioning{Kind: PartitionSingle, Count: 1}, Inputs: []int{res.ID}})
	g.Result = id
}

// OneTask reports whether stage st certainly runs as one task: it scans
// no table and reads at least one single-partition output, with every
// exchange leaf reading a single output or a whole one.
func (g *Graph) OneTask(st *Stage) bool {
	one, many := false, false
	Walk(st.Root, func(n *Node) {
		switch n.Kind {
		case KindScan:
			many = true
		case KindExchange:
			up := g.Stage(n.Stage)
			switch {
			case n.Whole:
			case up != nil && up.Output.Kind == PartitionSingle:
				one = true
			default:
				many = true
			}
		}
	})
	return one && !many
}
