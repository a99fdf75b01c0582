package coordinator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// TestStagePlanInline: a small fragment travels in every task's spec, and
// its object (what a repair reads) is in the bucket, with the same bytes,
// once the stage is done; a fragment over InlinePlanBytes goes by its key
// only, its object written before any task starts.
func TestStagePlanInline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		big    bool
		inline bool
	}{
		{"small fragment", false, true},
		{"large fragment", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFakeEnv(t, 4)
			g := twoStageGraph()
			if tc.big {
				// A filter with a long IN list makes stage 0's fragment large.
				var list []*plan.Expr
				for i := range 2000 {
					list = append(list, plan.Literal(plan.Value{I: int64(i)}, plan.Int64Type))
				}
				in := plan.Call(plan.OpIn, plan.BoolType, append([]*plan.Expr{plan.Column(0, "x", plan.Int64Type)}, list...)...)
				scan := g.Stages[0].Root
				g.Stages[0].Root = &plan.Node{Kind: plan.KindFilter, Predicate: in, Inputs: []*plan.Node{scan}, Schema: scan.Schema}
			}
			var mu sync.Mutex
			missing := ""
			e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
				if len(s.Plan) == 0 {
					// By key: the object must be there when the task runs.
					if _, err := e.bucket.Get(ctx, s.PlanKey); errors.Is(err, objstore.ErrNotFound) {
						mu.Lock()
						missing = s.PlanKey
						mu.Unlock()
					}
				}
				return nil, nil, false
			}
			c := New(testConfig("a"), NewStore(e.rdb), e.bucket, fakePlanner{g}, fakeTables{e.files}, e.inv, nil)
			t.Cleanup(c.Close)
			ctx := context.Background()
			job, _ := c.Submit(ctx, "q", SubmitOptions{})
			waitJob(t, c, job)
			checkDone(t, c, job, 4)
			if missing != "" {
				t.Fatalf("a task without its fragment ran before %s was written", missing)
			}
			for stage := range 2 {
				body, err := json.Marshal(g.Stages[stage])
				if err != nil {
					t.Fatal(err)
				}
				wantInline := tc.inline || stage == 1
				if len(body) > InlinePlanBytes == wantInline {
					t.Fatalf("stage %d fragment is %d bytes: the case does not test what it says", stage, len(body))
				}
				specs := e.inv.specsOf(stage, 0)
				if len(specs) == 0 {
					t.Fatalf("stage %d: no spec", stage)
				}
				for _, s := range specs {
					if got := len(s.Plan) > 0; got != wantInline {
						t.Fatalf("stage %d: fragment in the spec %v, want %v", stage, got, wantInline)
					}
					stored, err := e.bucket.Get(ctx, s.PlanKey)
					if err != nil {
						t.Fatalf("stage %d: plan object %s: %v", stage, s.PlanKey, err)
					}
					var st plan.Stage
					if err := json.Unmarshal(stored, &st); err != nil || st.ID != stage {
						t.Fatalf("stage %d: plan object holds stage %d (%v)", stage, st.ID, err)
					}
					if wantInline && !bytes.Equal(s.Plan, stored) {
						t.Fatalf("stage %d: the spec's fragment is not its object's", stage)
					}
				}
			}
		})
	}
}
