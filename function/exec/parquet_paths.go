package exec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// Struct field paths (plan.Scan.Paths): a scan column that is the field
// s.a.b of a file's struct column s reads only the leaves under s.a.b,
// so only their column chunks are fetched; the record reader hands over s
// with only the fields on the way (pqarrow prunes a struct to the fields
// whose leaves are read), and the scan takes the field out of it.

// pathLeaves resolves column name and its struct field path in a file's
// schema: the leaves under the field, and the one leaf whose statistics
// describe the column's values (-1 when the field is not a primitive, or a
// repeated field on the way makes its leaf's values other than the
// column's, one per row). nil leaves: the file has no such column.
func pathLeaves(sch *schema.Schema, name string, path []string) ([]int, int, error) {
	root := sch.Root()
	fi := fieldIndexFold(root, name)
	if fi < 0 {
		return nil, -1, nil
	}
	node := root.Field(fi)
	flat := node.RepetitionType() != parquet.Repetitions.Repeated
	for _, f := range path {
		g, ok := node.(*schema.GroupNode)
		if !ok || !plainGroup(g) {
			return nil, -1, fmt.Errorf("%s is not a struct in the file: it has no field %q", node.Path(), f)
		}
		k := fieldIndexFold(g, f)
		if k < 0 {
			return nil, -1, fmt.Errorf("struct %s has no field %q in the file", node.Path(), f)
		}
		node = g.Field(k)
		if node.RepetitionType() == parquet.Repetitions.Repeated {
			flat = false
		}
	}
	var leaves []int
	for j := 0; j < sch.NumColumns(); j++ {
		for n := sch.Column(j).SchemaNode(); n != nil; n = n.Parent() {
			if n == node {
				leaves = append(leaves, j)
				break
			}
		}
	}
	stat := -1
	if _, prim := node.(*schema.PrimitiveNode); prim && flat && len(leaves) == 1 {
		stat = leaves[0]
	}
	return leaves, stat, nil
}

// plainGroup reports whether g is a struct: a group that is not repeated
// and is not annotated as a LIST or MAP.
func plainGroup(g *schema.GroupNode) bool {
	if g.RepetitionType() == parquet.Repetitions.Repeated {
		return false
	}
	switch g.LogicalType().(type) {
	case nil, schema.NoLogicalType:
	default:
		return false
	}
	switch g.ConvertedType() {
	case schema.ConvertedTypes.List, schema.ConvertedTypes.Map, schema.ConvertedTypes.MapKeyValue:
		return false
	}
	return true
}

// fieldIndexFold is the index of g's field named name, exactly, else
// regardless of case; -1 when there is none.
func fieldIndexFold(g *schema.GroupNode, name string) int {
	if i := g.FieldIndexByName(name); i >= 0 {
		return i
	}
	for j := 0; j < g.NumFields(); j++ {
		if strings.EqualFold(g.Field(j).Name(), name) {
			return j
		}
	}
	return -1
}

// extractPath takes the field path out of a struct array as read from a
// file: NULL where the struct or a struct on the way is NULL. The result
// is a new reference.
func extractPath(mem memory.Allocator, a arrow.Array, path []string) (arrow.Array, error) {
	cur := a
	cur.Retain()
	for _, f := range path {
		st, ok := cur.(*array.Struct)
		if !ok {
			cur.Release()
			return nil, fmt.Errorf("field %q of a value of type %s, not a struct", f, a.DataType())
		}
		k := structFieldFold(st.DataType().(*arrow.StructType), f)
		if k < 0 {
			cur.Release()
			return nil, fmt.Errorf("the struct read has no field %q", f)
		}
		next := withParentNulls(mem, st, st.Field(k))
		cur.Release()
		cur = next
	}
	return cur, nil
}

func structFieldFold(t *arrow.StructType, name string) int {
	if i, ok := t.FieldIdx(name); ok {
		return i
	}
	for i, f := range t.Fields() {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// withParentNulls returns child (a field of parent, aligned with it) NULL
// where parent is too, as a new reference.
func withParentNulls(mem memory.Allocator, parent, child arrow.Array) arrow.Array {
	if parent.NullN() == 0 || child.DataType().ID() == arrow.NULL {
		child.Retain()
		return child
	}
	n := child.Len()
	d := child.Data()
	off := d.Offset()
	bm := newBuf(mem, int(bitutil.BytesForBits(int64(off+n))))
	out := bm.Bytes()
	pb, poff := validityOf(parent)
	if cb, coff := validityOf(child); cb != nil {
		bitutil.BitmapAnd(pb, cb, int64(poff), int64(coff), out, int64(off), int64(n))
	} else {
		bitutil.CopyBitmap(pb, poff, n, out, off)
	}
	bufs := append([]*memory.Buffer{bm}, d.Buffers()[1:]...)
	nd := array.NewData(d.DataType(), n, bufs, d.Children(), array.UnknownNullCount, off)
	if dict := d.Dictionary(); dict != nil {
		nd.SetDictionary(dict)
	}
	res := array.MakeFromData(nd)
	nd.Release()
	bm.Release()
	return res
}

// elemFieldLeaves resolves the element fields read of a list column
// (plan.Scan.Fields) with pqarrow's reading of the file's schema: the
// leaves under each field path, list levels on the way passed through.
// The column is name, under its struct field path; false when a field is
// not there (the scan then reads the whole column).
func elemFieldLeaves(m *pqarrow.SchemaManifest, name string, path []string, fields [][]string) ([]int, bool) {
	var node *pqarrow.SchemaField
	for i := range m.Fields {
		if m.Fields[i].Field.Name == name {
			node = &m.Fields[i]
			break
		}
	}
	if node == nil {
		for i := range m.Fields {
			if strings.EqualFold(m.Fields[i].Field.Name, name) {
				node = &m.Fields[i]
				break
			}
		}
	}
	child := func(n *pqarrow.SchemaField, f string) *pqarrow.SchemaField {
		if n.Field.Type.ID() == arrow.MAP {
			// A map's parts, by position: its entries' key and value.
			if len(n.Children) != 1 || len(n.Children[0].Children) != 2 {
				return nil
			}
			switch f {
			case "key":
				return &n.Children[0].Children[0]
			case "value":
				return &n.Children[0].Children[1]
			}
			return nil
		}
		if n.Field.Type.ID() != arrow.STRUCT {
			return nil
		}
		for i := range n.Children {
			if n.Children[i].Field.Name == f {
				return &n.Children[i]
			}
		}
		for i := range n.Children {
			if strings.EqualFold(n.Children[i].Field.Name, f) {
				return &n.Children[i]
			}
		}
		return nil
	}
	for _, f := range path {
		if node == nil {
			return nil, false
		}
		node = child(node, f)
	}
	if node == nil {
		return nil, false
	}
	var out []int
	var collect func(n *pqarrow.SchemaField)
	collect = func(n *pqarrow.SchemaField) {
		if n.IsLeaf() {
			if !slices.Contains(out, n.ColIndex) {
				out = append(out, n.ColIndex)
			}
			return
		}
		for i := range n.Children {
			collect(&n.Children[i])
		}
	}
	for _, fp := range fields {
		cur := node
		for _, f := range fp {
			for cur != nil && isListType(cur.Field.Type) && len(cur.Children) == 1 {
				cur = &cur.Children[0]
			}
			if cur == nil {
				return nil, false
			}
			cur = child(cur, f)
			if cur == nil {
				return nil, false
			}
		}
		collect(cur)
	}
	if len(out) == 0 {
		return nil, false
	}
	slices.Sort(out)
	return out, true
}

func isListType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST:
		return true
	}
	return false
}

// pruneMaps makes the record reader of m read a map with only the leaves
// included (plan.Scan.Fields: map_keys(m), cardinality(m)). pqarrow reads
// both of a map's leaves whatever the selection (a map array needs its
// keys and values), so a map whose value leaves are not all included is
// described to it as the list of its entries it is stored as: the
// entries' struct then keeps the included parts only (the key alone, or
// nothing, which drops the map from a struct around it), read from their
// leaves' levels and values. The scan hands such a map over with NULL
// values (toEngineSparse). Only maps whose key is one leaf; the others
// are read whole as before.
func pruneMaps(m *pqarrow.SchemaManifest, included []int) {
	in := map[int]bool{}
	for _, l := range included {
		in[l] = true
	}
	all := func(n *pqarrow.SchemaField, want bool) bool {
		ok := true
		var walk func(n *pqarrow.SchemaField)
		walk = func(n *pqarrow.SchemaField) {
			if n.IsLeaf() {
				ok = ok && in[n.ColIndex] == want
				return
			}
			for i := range n.Children {
				walk(&n.Children[i])
			}
		}
		walk(n)
		return ok
	}
	var visit func(n *pqarrow.SchemaField)
	visit = func(n *pqarrow.SchemaField) {
		for i := range n.Children {
			visit(&n.Children[i])
		}
		if n.Field.Type.ID() != arrow.MAP || len(n.Children) != 1 || len(n.Children[0].Children) != 2 {
			return
		}
		entries := &n.Children[0]
		key, val := &entries.Children[0], &entries.Children[1]
		if !key.IsLeaf() || all(val, true) || !all(val, false) {
			return // read whole, or a part of the value read
		}
		var kept []arrow.Field
		if in[key.ColIndex] {
			kept = append(kept, *key.Field)
		}
		f := *n.Field
		f.Type = arrow.ListOfField(arrow.Field{Name: entries.Field.Name, Type: arrow.StructOf(kept...), Nullable: entries.Field.Nullable, Metadata: entries.Field.Metadata})
		n.Field = &f
	}
	for i := range m.Fields {
		visit(&m.Fields[i])
	}
}
