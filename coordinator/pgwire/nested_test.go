package pgwire

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestNestedText: the RowDescription type and text form of nested
// values: arrays of scalars with Postgres's quoting, lists of lists as
// multi-dimensional arrays of the scalar's array OID, structs as
// composite text, lists of structs as text arrays of quoted composites.
func TestNestedText(t *testing.T) {
	mem := memory.DefaultAllocator
	strList := func() arrow.Array {
		b := array.NewListBuilder(mem, arrow.BinaryTypes.String)
		v := b.ValueBuilder().(*array.StringBuilder)
		b.Append(true)
		for _, s := range []string{"a,b", `say "hi"`, "{x}", "two words", "NULL", "", `back\slash`, "plain"} {
			v.Append(s)
		}
		v.AppendNull()
		return b.NewArray()
	}
	nested := func() arrow.Array {
		b := array.NewListBuilder(mem, arrow.ListOf(arrow.PrimitiveTypes.Int64))
		in := b.ValueBuilder().(*array.ListBuilder)
		v := in.ValueBuilder().(*array.Int64Builder)
		b.Append(true)
		in.Append(true)
		v.AppendValues([]int64{1, 2}, nil)
		in.Append(true)
		v.Append(3)
		in.Append(true) // empty
		in.AppendNull()
		in.Append(true)
		v.AppendNull()
		return b.NewArray()
	}
	deepText := func() arrow.Array {
		b := array.NewListBuilder(mem, arrow.ListOf(arrow.ListOf(arrow.BinaryTypes.String)))
		l2 := b.ValueBuilder().(*array.ListBuilder)
		l3 := l2.ValueBuilder().(*array.ListBuilder)
		v := l3.ValueBuilder().(*array.StringBuilder)
		b.Append(true)
		l2.Append(true)
		l3.Append(true)
		v.AppendValues([]string{"a b", "}"}, nil)
		return b.NewArray()
	}
	structs := func() arrow.Array {
		st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true})
		b := array.NewListBuilder(mem, st)
		sb := b.ValueBuilder().(*array.StructBuilder)
		b.Append(true)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int64Builder).Append(1)
		sb.FieldBuilder(1).(*array.StringBuilder).Append(`p "q"`)
		sb.AppendNull()
		sb.FieldBuilder(0).(*array.Int64Builder).AppendNull()
		sb.FieldBuilder(1).(*array.StringBuilder).AppendNull()
		return b.NewArray()
	}
	for _, tc := range []struct {
		name   string
		col    func() arrow.Array
		oid    uint32
		binary bool
		text   string
	}{
		{"text[]", strList, 1009, true, `{"a,b","say \"hi\"","{x}","two words","NULL","","back\\slash",plain,NULL}`},
		{"bigint[][]", nested, 1016, false, `{{1,2},{3},{},NULL,{NULL}}`},
		{"text[][][]", deepText, 1009, false, `{{{"a b","}"}}}`},
		{"struct[]", structs, oidText, false, `{"(1,\"p \"\"q\"\"\")",NULL}`},
	} {
		col := tc.col()
		typ, ok := nestedType(col.DataType())
		if !ok || typ.OID != tc.oid || typ.binary != tc.binary {
			t.Errorf("%s: type %+v, want OID %d binary %v", tc.name, typ, tc.oid, tc.binary)
		}
		if got := string(appendNested(nil, col, 0)); got != tc.text {
			t.Errorf("%s: text %s, want %s", tc.name, got, tc.text)
		}
		if strings.HasSuffix(tc.name, "[]") && typ.Name == "text" && tc.oid != oidText {
			t.Errorf("%s: named %s", tc.name, typ.Name)
		}
		col.Release()
	}
}
