package coordinator

import (
	"reflect"
	"testing"

	"github.com/sluicedb/sluice/shuffle"
)

// TestObjectGroups: a combining stage's tasks divide the input's data
// objects into contiguous runs ordered by the task that wrote them (not by
// key, which a repaired object changes), each task reading every partition
// of its objects.
func TestObjectGroups(t *testing.T) {
	key := func(task, attempt int) string {
		return shuffle.DataKey(shuffle.AttemptPrefix("p", "j", 0, task, attempt))
	}
	ref := func(task, attempt, part int) shuffle.ObjectRef {
		return shuffle.ObjectRef{Key: key(task, attempt), Part: part, Offset: int64(8 + part), Bytes: 1}
	}
	// Tasks 0..4; task 2 wrote nothing, task 3's object was written again
	// (attempt 7), task 10 sorts after task 4 though its key sorts before.
	out := &stageOutput{Objects: map[int][]shuffle.ObjectRef{
		0: {ref(0, 0, 0), ref(1, 0, 0), ref(3, 7, 0), ref(10, 0, 0)},
		1: {ref(1, 0, 1), ref(4, 0, 1)},
		2: {ref(0, 0, 2), ref(4, 0, 2), ref(10, 0, 2)},
	}}
	cases := []struct {
		k    int
		want [][]shuffle.ObjectRef
	}{
		{1, [][]shuffle.ObjectRef{{ref(0, 0, 0), ref(0, 0, 2), ref(1, 0, 0), ref(1, 0, 1), ref(3, 7, 0), ref(4, 0, 1), ref(4, 0, 2), ref(10, 0, 0), ref(10, 0, 2)}}},
		{2, [][]shuffle.ObjectRef{{ref(0, 0, 0), ref(0, 0, 2), ref(1, 0, 0), ref(1, 0, 1)}, {ref(3, 7, 0), ref(4, 0, 1), ref(4, 0, 2), ref(10, 0, 0), ref(10, 0, 2)}}},
		{0, [][]shuffle.ObjectRef{{ref(0, 0, 0), ref(0, 0, 2), ref(1, 0, 0), ref(1, 0, 1), ref(3, 7, 0), ref(4, 0, 1), ref(4, 0, 2), ref(10, 0, 0), ref(10, 0, 2)}}},
		{9, [][]shuffle.ObjectRef{{ref(0, 0, 0), ref(0, 0, 2)}, {ref(1, 0, 0), ref(1, 0, 1)}, {ref(3, 7, 0)}, {ref(4, 0, 1), ref(4, 0, 2)}, {ref(10, 0, 0), ref(10, 0, 2)}}},
	}
	for _, c := range cases {
		if got := out.objectGroups(c.k); !reflect.DeepEqual(got, c.want) {
			t.Errorf("k=%d: groups\n%v\nwant\n%v", c.k, got, c.want)
		}
	}
	if got := (*stageOutput)(nil).objectGroups(3); len(got) != 1 || len(got[0]) != 0 {
		t.Errorf("a skipped input gives %v, want one task reading nothing", got)
	}
}
