package coordinator

import (
	"reflect"
	"testing"

	"github.com/sluicedb/sluice/coordinator/webui"
)

func TestGraphChanges(t *testing.T) {
	stage := func(id, tasks int, state string) webui.GraphStage {
		return webui.GraphStage{ID: id, Ops: "scan t", Output: "hash x8", Tasks: tasks, State: state}
	}
	cases := []struct {
		name      string
		prev, cur []webui.GraphStage
		want      map[int][]string
	}{
		{"coalesced", []webui.GraphStage{stage(1, 8, "pending")}, []webui.GraphStage{stage(1, 2, "pending")},
			map[int][]string{1: {"tasks 8 → 2"}}},
		{"scan sized", []webui.GraphStage{stage(0, 0, "pending")}, []webui.GraphStage{stage(0, 2, "pending")},
			map[int][]string{0: {"tasks one per split → 2"}}},
		{"a started stage's count is not a change", []webui.GraphStage{stage(0, 0, "pending")}, []webui.GraphStage{stage(0, 6, "running")},
			nil},
		{"skipped", []webui.GraphStage{stage(2, 4, "pending")}, []webui.GraphStage{{ID: 2, Ops: "scan t", Output: "hash x8", Tasks: 4, State: "skipped", Reason: "input stage 1 is empty"}},
			map[int][]string{2: {"skipped (input stage 1 is empty)"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := graphChanges(&webui.Graph{Stages: c.prev}, &webui.Graph{Stages: c.cur})
			if len(got) == 0 && len(c.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("changes %v, want %v", got, c.want)
			}
		})
	}
}
