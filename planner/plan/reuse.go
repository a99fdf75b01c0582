package plan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ReuseStages makes stages that compute the same output one stage, the way
// Spark's ReuseExchange rule reuses an exchange whose plan is the same as
// another's: a view or common table expression read twice (TPC-H Q15's
// revenue view, a subquery repeating the outer query's joins) is planned
// twice, and would be scanned, joined and shuffled twice.
//
// Two stages are the same when their fragments and output partitioning
// are equal once the stages they read are (so a chain of equal stages
// folds bottom-up). The later stage is dropped and its consumers read the
// earlier one. A stage is not merged into another when a consumer would
// then read the same stage through two exchanges, when either is the
// result or writes a table, or when its fragment calls a volatile
// function (two evaluations may differ). Stages are numbered 0..n-1 again
// afterwards. It returns a note per merge.
func (g *Graph) ReuseStages() []string {
	var notes []string
	candidates := 0
	for _, s := range g.Stages {
		if s.ID != g.Result && s.Root != nil && s.Root.Kind != KindWrite {
			candidates++
		}
	}
	if candidates < 2 {
		return nil // nothing to merge (and no fragment to encode: a long IN list is costly to)
	}
	for {
		seen := map[string]int{} // fragment key -> first stage
		merged := false
		for _, s := range g.Stages {
			if s.ID == g.Result || s.Root == nil || s.Root.Kind == KindWrite {
				continue
			}
			key, err := json.Marshal(struct {
				Root   *Node        `json:"root"`
				Output Partitioning `json:"output"`
			}{s.Root, s.Output})
			if err != nil || volatile(key) {
				continue
			}
			first, ok := seen[string(key)]
			if !ok {
				seen[string(key)] = s.ID
				continue
			}
			if g.sharesConsumer(first, s.ID) {
				continue
			}
			g.redirect(s.ID, first)
			notes = append(notes, fmt.Sprintf("stage %d computes what stage %d does: its readers read stage %d", s.ID, first, first))
			merged = true
			break // the graph changed: start over
		}
		if !merged {
			if len(notes) > 0 {
				g.renumber()
			}
			return notes
		}
	}
}

// renumber gives the stages the ids 0..n-1 in their order, as the planner
// numbers them.
func (g *Graph) renumber() {
	ids := make(map[int]int, len(g.Stages))
	for i, s := range g.Stages {
		ids[s.ID] = i
	}
	for _, s := range g.Stages {
		s.ID = ids[s.ID]
		for i, in := range s.Inputs {
			s.Inputs[i] = ids[in]
		}
		Walk(s.Root, func(n *Node) {
			if n.Kind == KindExchange {
				n.Stage = ids[n.Stage]
			}
		})
	}
	g.Result = ids[g.Result]
}

// sharesConsumer reports whether some stage reads both a and b.
func (g *Graph) sharesConsumer(a, b int) bool {
	for _, s := range g.Stages {
		if slices.Contains(s.Inputs, a) && slices.Contains(s.Inputs, b) {
			return true
		}
	}
	return false
}

// redirect makes every reader of stage from read stage to, and drops from.
func (g *Graph) redirect(from, to int) {
	for _, s := range g.Stages {
		if !slices.Contains(s.Inputs, from) {
			continue
		}
		Walk(s.Root, func(n *Node) {
			if n.Kind == KindExchange && n.Stage == from {
				n.Stage = to
			}
		})
		for i, in := range s.Inputs {
			if in == from {
				s.Inputs[i] = to
			}
		}
	}
	g.Stages = slices.DeleteFunc(g.Stages, func(s *Stage) bool { return s.ID == from })
}

// volatileFuncs are functions whose every evaluation may differ.
var volatileFuncs = []string{"random", "uuid", "gen_random_uuid", "setseed"}

// volatile reports whether a fragment's encoding calls a volatile
// function (anywhere: filters, projections, aggregates, join conditions).
func volatile(key []byte) bool {
	k := strings.ToLower(string(key))
	for _, f := range volatileFuncs {
		if strings.Contains(k, `"func":"`+f+`"`) {
			return true
		}
	}
	return false
}
