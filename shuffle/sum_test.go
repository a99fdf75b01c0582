package shuffle

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSumWireForm: a Sum reads and writes the text checksums manifests,
// results and specs carried as strings ("xxh3:" and 16 hex digits; ""
// for none), byte for byte, and refuses any other format.
func TestSumWireForm(t *testing.T) {
	data := []byte("some partition bytes")
	if got, want := SumOf(data).String(), Checksum(data); got != want || len(got) != len(ChecksumAlgo)+17 || !strings.HasPrefix(got, "xxh3:") {
		t.Fatalf("String %q, Checksum %q", got, want)
	}
	for _, tc := range []struct {
		json string
		want Sum
		err  bool
	}{
		{`""`, 0, false},
		{`"xxh3:0000000000000001"`, 1, false},
		{`"xxh3:ffffffffffffffff"`, ^Sum(0), false},
		{`"xxh3:00000000deadbeef"`, 0xdeadbeef, false},
		{`"sha1:0000000000000001"`, 0, true},
		{`"xxh3:1"`, 0, true},
		{`"xxh3:000000000000000g"`, 0, true},
	} {
		var s Sum
		err := json.Unmarshal([]byte(tc.json), &s)
		if (err != nil) != tc.err || (err == nil && s != tc.want) {
			t.Fatalf("%s: %v (%v), want %v (error %v)", tc.json, s, err, tc.want, tc.err)
		}
		if err == nil {
			if b, _ := json.Marshal(s); string(b) != tc.json {
				t.Fatalf("%s written back as %s", tc.json, b)
			}
		}
	}
	// The structs' JSON is what it was with string checksums.
	for _, tc := range []struct {
		v    any
		want string
	}{
		{PartitionStat{Partition: 1, Rows: 2, Bytes: 3, Key: "k"}, `{"partition":1,"rows":2,"bytes":3,"key":"k","checksum":""}`},
		{PartitionStat{Partition: 1, Rows: 2, Bytes: 3, Key: "k", Checksum: 0xab}, `{"partition":1,"rows":2,"bytes":3,"key":"k","checksum":"xxh3:00000000000000ab"}`},
		{ObjectRef{Key: "k"}, `{"key":"k"}`},
		{ObjectRef{Key: "k", Offset: 8, Bytes: 3, Checksum: 0xab}, `{"key":"k","offset":8,"bytes":3,"checksum":"xxh3:00000000000000ab"}`},
		{sumList{1, 0, 0xab}, `["xxh3:0000000000000001","","xxh3:00000000000000ab"]`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Fatalf("%+v: %s (%v), want %s", tc.v, b, err, tc.want)
		}
	}
	// A packed list with checksums, as written before Sum, still reads.
	var l PartitionList
	old := `{"packed":16,"key":"k","rows":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"bytes":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"base":8,` +
		`"sum":["xxh3:0000000000000001","","","","","","","","","","","","","","","xxh3:0000000000000010"]}`
	if err := json.Unmarshal([]byte(old), &l); err != nil {
		t.Fatal(err)
	}
	if l[0].Checksum != 1 || l[1].Checksum != 0 || l[15].Checksum != 16 {
		t.Fatalf("sums %v %v %v", l[0].Checksum, l[1].Checksum, l[15].Checksum)
	}
	if b, _ := json.Marshal(l); string(b) != old {
		t.Fatalf("written back as\n%s\nwant\n%s", b, old)
	}
}
