package shuffle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Packed JSON forms of the two lists that grow with a stage's width: a
// task's output partitions (PartitionList, in a TaskResult) and the
// objects a task reads (ObjectRefs, in a TaskSpec's inputs). A scan task
// feeding a 2,000-partition exchange reports 2,000 partitions of one data
// object; as an array of objects each entry repeats the key and the field
// names (about 150 bytes a partition, 290 KB a task). Packed, the key is
// written once and each field is one array (about 10-20 bytes a
// partition). Lists shorter than PackMin keep the plain array form, and
// both forms are read, so results and specs written before still decode.

// PackMin is the length from which PartitionList and ObjectRefs encode
// packed.
const PackMin = 16

// PartitionList is a task's non-empty output partitions, in partition
// order. It is a plain slice; only its JSON differs (see PackMin).
type PartitionList []PartitionStat

// packedPartitions is PartitionList's packed JSON. Keys is set only when
// the partitions are not all ranges of one object (Key); Part only when
// the partitions are not 0..n-1; Offset only when the ranges are not
// contiguous from Base (Base 0 and no Offset: every offset is 0); Sum
// only when some partition has a checksum.
type packedPartitions struct {
	N      int      `json:"packed"`
	Key    string   `json:"key,omitempty"`
	Keys   []string `json:"keys,omitempty"`
	Part   []int    `json:"part,omitempty"`
	Rows   []int64  `json:"rows"`
	Bytes  []int64  `json:"bytes"`
	Base   int64    `json:"base,omitempty"`
	Offset []int64  `json:"offset,omitempty"`
	Sum    sumList  `json:"sum,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (l PartitionList) MarshalJSON() ([]byte, error) {
	if len(l) < PackMin {
		return json.Marshal([]PartitionStat(l))
	}
	n := len(l)
	p := packedPartitions{N: n, Key: l[0].Key, Rows: make([]int64, n), Bytes: make([]int64, n)}
	sameKey, dense, contiguous, zeroOff, sums := true, true, true, true, false
	for i, s := range l {
		p.Rows[i], p.Bytes[i] = s.Rows, s.Bytes
		sameKey = sameKey && s.Key == l[0].Key
		dense = dense && s.Partition == i
		zeroOff = zeroOff && s.Offset == 0
		if i > 0 {
			contiguous = contiguous && s.Offset == l[i-1].Offset+l[i-1].Bytes
		}
		sums = sums || s.Checksum != 0
	}
	if !sameKey {
		p.Key, p.Keys = "", make([]string, n)
		for i, s := range l {
			p.Keys[i] = s.Key
		}
	}
	if !dense {
		p.Part = make([]int, n)
		for i, s := range l {
			p.Part[i] = s.Partition
		}
	}
	switch {
	case zeroOff:
	case contiguous && l[0].Offset > 0:
		p.Base = l[0].Offset
	default:
		p.Offset = make([]int64, n)
		for i, s := range l {
			p.Offset[i] = s.Offset
		}
	}
	if sums {
		p.Sum = make(sumList, n)
		for i, s := range l {
			p.Sum[i] = s.Checksum
		}
	}
	return json.Marshal(&p)
}

// UnmarshalJSON implements json.Unmarshaler: the array and the packed form.
func (l *PartitionList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		var plain []PartitionStat
		if err := json.Unmarshal(b, &plain); err != nil {
			return err
		}
		*l = plain
		return nil
	}
	var p packedPartitions
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	n := p.N
	if n < 0 || len(p.Rows) != n || len(p.Bytes) != n || (p.Keys != nil && len(p.Keys) != n) ||
		(p.Part != nil && len(p.Part) != n) || (p.Offset != nil && len(p.Offset) != n) || (p.Sum != nil && len(p.Sum) != n) {
		return fmt.Errorf("packed partition list of %d: arrays of other lengths", n)
	}
	out := make(PartitionList, n)
	off := p.Base
	for i := range out {
		s := PartitionStat{Partition: i, Rows: p.Rows[i], Bytes: p.Bytes[i], Key: p.Key}
		if p.Keys != nil {
			s.Key = p.Keys[i]
		}
		if p.Part != nil {
			s.Partition = p.Part[i]
		}
		switch {
		case p.Offset != nil:
			s.Offset = p.Offset[i]
		case p.Base > 0:
			s.Offset = off
			off += s.Bytes
		}
		if p.Sum != nil {
			s.Checksum = p.Sum[i]
		}
		out[i] = s
	}
	*l = out
	return nil
}

// ObjectRefs is a list of objects a task reads. It is a plain slice; only
// its JSON differs (see PackMin).
type ObjectRefs []ObjectRef

// packedRefs is ObjectRefs' packed JSON: the distinct keys once, without
// their common prefix (Pre) and suffix (Suf), and per ref the index of
// its key (K; omitted when ref i reads key i), its partition (Part, or
// PartAll when every ref has the same), and its range, rows and checksum
// (each omitted when zero or empty throughout).
type packedRefs struct {
	N       int      `json:"packed"`
	Pre     string   `json:"pre,omitempty"`
	Suf     string   `json:"suf,omitempty"`
	Keys    []string `json:"keys"`
	K       []int    `json:"k,omitempty"`
	PartAll int      `json:"part_all,omitempty"`
	Part    []int    `json:"part,omitempty"`
	Offset  []int64  `json:"offset,omitempty"`
	Bytes   []int64  `json:"bytes,omitempty"`
	Rows    []int64  `json:"rows,omitempty"`
	Sum     sumList  `json:"sum,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (rs ObjectRefs) MarshalJSON() ([]byte, error) {
	return marshalRefs(len(rs), func(i int) ObjectRef { return rs[i] })
}

// RefsOf is a list of N refs given by Ref(i), for i in [0, N): its JSON
// is that of the ObjectRefs of the same refs, written without the list
// being built (a combining task's spec lists every partition of its
// objects, ~115,000 refs at SF 1,000: as a list, 56 bytes a ref before
// its encoding). Ref is called several times per ref, in order from 0 in
// each pass, from one goroutine.
type RefsOf struct {
	N   int
	Ref func(i int) ObjectRef
}

// MarshalJSON implements json.Marshaler.
func (r RefsOf) MarshalJSON() ([]byte, error) { return marshalRefs(r.N, r.Ref) }

// marshalRefs writes the JSON of n refs: an array below PackMin, else
// packedRefs' form, column by column into one buffer.
func marshalRefs(n int, ref func(i int) ObjectRef) ([]byte, error) {
	if n < PackMin {
		rs := make([]ObjectRef, n)
		for i := range rs {
			rs[i] = ref(i)
		}
		return json.Marshal(rs)
	}
	index := map[string]int{}
	var keys []string
	lastKey, lastK := "", -1
	keyOf := func(key string) int {
		if lastK >= 0 && key == lastKey {
			return lastK
		}
		k, ok := index[key]
		if !ok {
			k = len(keys)
			index[key] = k
			keys = append(keys, key)
		}
		lastKey, lastK = key, k
		return k
	}
	identity, samePart := true, true
	var anyOff, anyBytes, anyRows, anySum bool
	part0 := ref(0).Part
	for i := range n {
		r := ref(i)
		k := keyOf(r.Key)
		identity = identity && k == i
		samePart = samePart && r.Part == part0
		anyOff, anyBytes, anyRows, anySum = anyOff || r.Offset != 0, anyBytes || r.Bytes != 0, anyRows || r.Rows != 0, anySum || r.Checksum != 0
	}
	pre, suf := commonAffixes(keys)
	b := make([]byte, 0, 64+n*(28+26*btoi(anySum)))
	b = append(b, `{"packed":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	str := func(s string) {
		q, _ := json.Marshal(s)
		b = append(b, q...)
	}
	if pre != "" {
		b = append(b, `,"pre":`...)
		str(pre)
	}
	if suf != "" {
		b = append(b, `,"suf":`...)
		str(suf)
	}
	b = append(b, `,"keys":[`...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		str(k[len(pre) : len(k)-len(suf)])
	}
	b = append(b, ']')
	column := func(name string, v func(r ObjectRef) int64) {
		b = append(b, `,"`...)
		b = append(b, name...)
		b = append(b, `":[`...)
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, v(ref(i)), 10)
		}
		b = append(b, ']')
	}
	if !identity {
		column("k", func(r ObjectRef) int64 { return int64(keyOf(r.Key)) })
	}
	switch {
	case !samePart:
		column("part", func(r ObjectRef) int64 { return int64(r.Part) })
	case part0 != 0:
		b = append(b, `,"part_all":`...)
		b = strconv.AppendInt(b, int64(part0), 10)
	}
	if anyOff {
		column("offset", func(r ObjectRef) int64 { return r.Offset })
	}
	if anyBytes {
		column("bytes", func(r ObjectRef) int64 { return r.Bytes })
	}
	if anyRows {
		column("rows", func(r ObjectRef) int64 { return r.Rows })
	}
	if anySum {
		b = append(b, `,"sum":[`...)
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = ref(i).Checksum.appendText(b)
			b = append(b, '"')
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// commonAffixes returns the longest prefix and suffix every key shares
// (not overlapping in the shortest key); none for fewer than two keys.
func commonAffixes(keys []string) (pre, suf string) {
	if len(keys) < 2 {
		return "", ""
	}
	pre, suf = keys[0], keys[0]
	for _, k := range keys[1:] {
		i := 0
		for i < len(pre) && i < len(k) && pre[i] == k[i] {
			i++
		}
		pre = pre[:i]
		j := 0
		for j < len(suf) && j < len(k) && suf[len(suf)-1-j] == k[len(k)-1-j] {
			j++
		}
		suf = suf[len(suf)-j:]
	}
	shortest := len(keys[0])
	for _, k := range keys {
		shortest = min(shortest, len(k))
	}
	if len(pre)+len(suf) > shortest {
		suf = suf[len(pre)+len(suf)-shortest:]
	}
	return pre, suf
}

// UnmarshalJSON implements json.Unmarshaler: the array and the packed form.
// The refs of one key share one string.
func (rs *ObjectRefs) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		var plain []ObjectRef
		if err := json.Unmarshal(b, &plain); err != nil {
			return err
		}
		*rs = plain
		return nil
	}
	var p packedRefs
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	n := p.N
	if n < 0 || (p.K == nil && len(p.Keys) != n) || (p.K != nil && len(p.K) != n) || (p.Part != nil && len(p.Part) != n) ||
		(p.Offset != nil && len(p.Offset) != n) || (p.Bytes != nil && len(p.Bytes) != n) ||
		(p.Rows != nil && len(p.Rows) != n) || (p.Sum != nil && len(p.Sum) != n) {
		return fmt.Errorf("packed object list of %d: arrays of other lengths", n)
	}
	keys := make([]string, len(p.Keys))
	for i, k := range p.Keys {
		keys[i] = p.Pre + k + p.Suf
	}
	out := make(ObjectRefs, n)
	for i := range out {
		k := i
		if p.K != nil {
			k = p.K[i]
			if k < 0 || k >= len(keys) {
				return fmt.Errorf("packed object list: key index %d of %d keys", k, len(keys))
			}
		}
		r := ObjectRef{Key: keys[k], Part: p.PartAll}
		if p.Part != nil {
			r.Part = p.Part[i]
		}
		if p.Offset != nil {
			r.Offset = p.Offset[i]
		}
		if p.Bytes != nil {
			r.Bytes = p.Bytes[i]
		}
		if p.Rows != nil {
			r.Rows = p.Rows[i]
		}
		if p.Sum != nil {
			r.Checksum = p.Sum[i]
		}
		out[i] = r
	}
	*rs = out
	return nil
}
