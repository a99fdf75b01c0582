package function

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/sluicedb/sluice/shuffle"
)

// TestEncodeParts: an EncodedSpec decodes to the spec it was built from,
// with and without splits and inputs; SetDeadline changes the deadline
// only (the bulk's bytes as they were) and leaves a body handed out
// before untouched.
func TestEncodeParts(t *testing.T) {
	d0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	head := TaskSpec{Version: SpecVersion, Job: "j", Stage: 1, Task: 2, Attempt: 3, Fence: 4, Bucket: "b", Prefix: "p",
		PlanKey: "p/plan", OutputPrefix: "p/out/", Limit: 10, LimitKey: "lk", ShuffleCodec: "lz4", Deadline: d0, FunctionMemory: 1 << 30}
	refs := make(shuffle.ObjectRefs, 40)
	for i := range refs {
		refs[i] = shuffle.ObjectRef{Key: "p/stage-0/obj", Part: i, Offset: int64(8 + 10*i), Bytes: 10, Rows: 1}
	}
	fragment := json.RawMessage(`{"id":1,"root":{"kind":"scan"}}`)
	for _, tc := range []struct {
		name   string
		plan   json.RawMessage
		splits []Split
		inputs []Input
	}{
		{"head only", nil, nil, nil},
		{"splits", nil, []Split{{Key: "t/f1.parquet", Size: 7, RowGroups: []int{0, 2}}}, nil},
		{"inputs", nil, nil, []Input{{Stage: 0, Objects: refs}, {Stage: 3, Objects: refs[:2]}}},
		{"both", nil, []Split{{Key: "t/f1.parquet", Size: 7}}, []Input{{Stage: 0, Objects: refs}}},
		{"refs given one at a time", nil, []Split{{Key: "t/f1.parquet", Size: 7}}, []Input{{Stage: 3, Objects: refs[:2]},
			{Stage: 0, Refs: &shuffle.RefsOf{N: len(refs), Ref: func(i int) shuffle.ObjectRef { return refs[i] }}}}},
		{"plan only", fragment, nil, nil},
		{"plan and splits", fragment, []Split{{Key: "t/f1.parquet", Size: 7}}, nil},
		{"plan and inputs", fragment, nil, []Input{{Stage: 0, Objects: refs}}},
		{"plan, splits and inputs", fragment, []Split{{Key: "t/f1.parquet", Size: 7}}, []Input{{Stage: 0, Objects: refs}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := head
			spec.Plan, spec.Splits, spec.Inputs = tc.plan, tc.splits, tc.inputs
			want := spec // the struct as it was
			e, err := spec.EncodeParts()
			if err != nil {
				t.Fatal(err)
			}
			check := func(body []byte, deadline time.Time) {
				t.Helper()
				got, err := DecodeSpec(body)
				if err != nil {
					t.Fatalf("%v: %s", err, body)
				}
				w := want
				w.Deadline = deadline
				a, _ := json.Marshal(got)
				b, _ := json.Marshal(&w)
				if !bytes.Equal(a, b) {
					t.Fatalf("decoded\n%s\nwant\n%s", a, b)
				}
				if !got.Deadline.Equal(deadline) {
					t.Fatalf("deadline %v, want %v", got.Deadline, deadline)
				}
			}
			first := e.Body()
			kept := append([]byte(nil), first...)
			check(first, d0)
			if !reflect.DeepEqual(spec, want) {
				t.Fatal("EncodeParts changed the spec")
			}
			d1 := d0.Add(time.Minute)
			if err := e.SetDeadline(d1); err != nil {
				t.Fatal(err)
			}
			check(e.Body(), d1)
			if !e.Deadline().Equal(d1) {
				t.Fatalf("Deadline() %v, want %v", e.Deadline(), d1)
			}
			if !bytes.Equal(first, kept) {
				t.Fatal("SetDeadline changed a body handed out before")
			}
			// The bulk is the same bytes, at the start of both bodies.
			n := bytes.Index(first, []byte(`"version"`))
			if n < 0 || !bytes.Equal(first[:n], e.Body()[:n]) {
				t.Fatalf("the bulk moved:\n%s\n%s", first, e.Body())
			}
		})
	}
}
