package shuffle

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestPartitionListJSON(t *testing.T) {
	ranged := func(n int, key string) PartitionList {
		l := make(PartitionList, n)
		off := int64(8)
		for i := range l {
			l[i] = PartitionStat{Partition: i, Rows: int64(i%7 + 1), Offset: off, Bytes: int64(100 + i), Key: key}
			off += l[i].Bytes
		}
		return l
	}
	sparse := ranged(40, "jobs/j/stage-0/ab/task-3/a0/data.arrow")
	for i := range sparse {
		sparse[i].Partition = 3 * i
		sparse[i].Checksum = Sum(i + 1)
	}
	gaps := ranged(20, "k")
	gaps[5].Offset += 64
	v1 := make(PartitionList, 20) // manifest version 1: one object per partition
	for i := range v1 {
		v1[i] = PartitionStat{Partition: i, Rows: 5, Bytes: 50, Key: fmt.Sprintf("jobs/j/stage-0/task-1/a0/part-%d.arrow", i)}
	}
	cases := []struct {
		name   string
		list   PartitionList
		packed bool
		want   []string // substrings of the JSON
	}{
		{"short stays an array", ranged(3, "k"), false, []string{`"partition":2`}},
		{"dense contiguous", ranged(2000, "jobs/j/stage-0/ab/task-3/a0/data.arrow"), true, []string{`"base":8`}},
		{"sparse with checksums", sparse, true, []string{`"part":[0,3,6`, `"sum":["xxh3:`}},
		{"offsets with a gap", gaps, true, []string{`"offset":[8,`}},
		{"one object per partition", v1, true, []string{`"keys":[`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.list)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.HasPrefix(string(b), "{"); got != c.packed {
				t.Fatalf("packed = %v, want %v: %.200s", got, c.packed, b)
			}
			for _, w := range c.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("JSON lacks %s: %.300s", w, b)
				}
			}
			var back PartitionList
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, c.list) {
				t.Fatalf("round trip differs:\n got %+v\nwant %+v", back[:min(3, len(back))], c.list[:min(3, len(c.list))])
			}
			plain, _ := json.Marshal([]PartitionStat(c.list))
			var fromPlain PartitionList
			if err := json.Unmarshal(plain, &fromPlain); err != nil || !reflect.DeepEqual(fromPlain, c.list) {
				t.Fatalf("the array form does not decode the same: %v", err)
			}
		})
	}
	// A dense 2,000-partition list of one object: the packed form is a
	// tenth of the array's size or less.
	l := ranged(2000, "jobs/q1/stage-0/ab/task-1234/a0/data.arrow")
	packed, _ := json.Marshal(l)
	plain, _ := json.Marshal([]PartitionStat(l))
	if len(packed)*10 > len(plain) {
		t.Errorf("packed %d bytes, array %d: want at most a tenth", len(packed), len(plain))
	}
	for _, bad := range []string{`{"packed":3,"rows":[1,2],"bytes":[1,2,3]}`, `{"packed":-1,"rows":[],"bytes":[]}`} {
		var x PartitionList
		if err := json.Unmarshal([]byte(bad), &x); err == nil {
			t.Errorf("%s decoded without error", bad)
		}
	}
}

func TestObjectRefsJSON(t *testing.T) {
	// What a reader of partition 17 gets: one range of each of 300 tasks'
	// data objects.
	reader := make(ObjectRefs, 300)
	for i := range reader {
		reader[i] = ObjectRef{Key: fmt.Sprintf("jobs/j/stage-0/%02x/task-%d/a0/data.arrow", i%256, i), Part: 17,
			Offset: int64(8 + 40*i), Bytes: 40, Rows: 3}
	}
	// A combining reader: every partition of a few objects, with checksums.
	combined := make(ObjectRefs, 0, 60)
	for i := 0; i < 60; i++ {
		combined = append(combined, ObjectRef{Key: fmt.Sprintf("jobs/j/stage-1/task-%d/a1/data.arrow", i/20), Part: i % 20,
			Offset: int64(8 + 10*(i%20)), Bytes: 10, Rows: 1, Checksum: Sum(i + 1)})
	}
	whole := make(ObjectRefs, 20) // version-1 objects read whole
	for i := range whole {
		whole[i] = ObjectRef{Key: fmt.Sprintf("k%d", i)}
	}
	same := make(ObjectRefs, 16) // one key throughout
	for i := range same {
		same[i] = ObjectRef{Key: "jobs/j/stage-0/task-0/a0/data.arrow", Part: i + 1, Offset: int64(8 + i), Bytes: 1}
	}
	cases := []struct {
		name   string
		refs   ObjectRefs
		packed bool
		want   []string
	}{
		{"short stays an array", reader[:5], false, []string{`"part":17`}},
		{"one range of many objects", reader, true, []string{`"part_all":17`, `"pre":"jobs/j/stage-0/"`, `"suf":"/a0/data.arrow"`}},
		{"every partition of a few objects", combined, true, []string{`"k":[0,0,`, `"sum":[`}},
		{"whole objects", whole, true, []string{`"keys":["0","1",`}},
		{"one key", same, true, []string{`"keys":["jobs/j/stage-0/task-0/a0/data.arrow"]`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.refs)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.HasPrefix(string(b), "{"); got != c.packed {
				t.Fatalf("packed = %v, want %v: %.200s", got, c.packed, b)
			}
			for _, w := range c.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("JSON lacks %s: %.300s", w, b)
				}
			}
			var back ObjectRefs
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, c.refs) {
				t.Fatalf("round trip differs:\n got %+v\nwant %+v", back[:min(3, len(back))], c.refs[:min(3, len(c.refs))])
			}
		})
	}
	packed, _ := json.Marshal(reader)
	plain, _ := json.Marshal([]ObjectRef(reader))
	if len(packed)*3 > len(plain) {
		t.Errorf("packed %d bytes, array %d: want at most a third", len(packed), len(plain))
	}
	for _, bad := range []string{`{"packed":2,"keys":["a"]}`, `{"packed":2,"keys":["a"],"k":[0,1]}`} {
		var x ObjectRefs
		if err := json.Unmarshal([]byte(bad), &x); err == nil {
			t.Errorf("%s decoded without error", bad)
		}
	}
}
