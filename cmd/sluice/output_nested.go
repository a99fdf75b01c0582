package main

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Nested values in the CLI: table and CSV output print them as DuckDB's
// CLI does ([1, 2, NULL], {'a': 1, 'b': x}, {k=v}); JSON output makes them
// JSON arrays and objects (a map an object when its keys are strings, else
// an array of {"key", "value"} objects).

// nestedText renders row i of a nested column as DuckDB prints it.
func nestedText(col arrow.Array, i int) string {
	var b strings.Builder
	writeNested(&b, col, i)
	return b.String()
}

func writeNested(b *strings.Builder, col arrow.Array, i int) {
	elem := func(c arrow.Array, j int, quote bool) {
		if c.IsNull(j) {
			b.WriteString("NULL")
			return
		}
		if isNested(c.DataType()) {
			writeNested(b, c, j)
			return
		}
		s, _ := formatValue(c, j)
		if quote && c.DataType().ID() == arrow.STRING {
			s = "'" + strings.ReplaceAll(s, "'", "''") + "'"
		}
		b.WriteString(s)
	}
	switch a := col.(type) {
	case *array.Map:
		lo, hi := a.ValueOffsets(i)
		b.WriteByte('{')
		for j := lo; j < hi; j++ {
			if j > lo {
				b.WriteString(", ")
			}
			elem(a.Keys(), int(j), false)
			b.WriteByte('=')
			elem(a.Items(), int(j), false)
		}
		b.WriteByte('}')
	case *array.List:
		lo, hi := a.ValueOffsets(i)
		b.WriteByte('[')
		for j := lo; j < hi; j++ {
			if j > lo {
				b.WriteString(", ")
			}
			elem(a.ListValues(), int(j), false)
		}
		b.WriteByte(']')
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		b.WriteByte('{')
		for f := 0; f < a.NumField(); f++ {
			if f > 0 {
				b.WriteString(", ")
			}
			b.WriteString("'" + strings.ReplaceAll(st.Field(f).Name, "'", "''") + "': ")
			elem(a.Field(f), i, true)
		}
		b.WriteByte('}')
	}
}

func isNested(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.LIST, arrow.MAP, arrow.STRUCT:
		return true
	}
	return false
}

// nestedJSON returns row i of a nested column as a value for
// encoding/json: []any for a list, an ordered object for a struct or a
// map with string keys.
func nestedJSON(col arrow.Array, i int) any {
	switch a := col.(type) {
	case *array.Map:
		lo, hi := a.ValueOffsets(i)
		if a.Keys().DataType().ID() == arrow.STRING {
			o := jsonObject{}
			for j := lo; j < hi; j++ {
				k, _ := formatValue(a.Keys(), int(j))
				o.keys = append(o.keys, k)
				o.vals = append(o.vals, jsonValue(a.Items(), int(j)))
			}
			return o
		}
		out := []any{}
		for j := lo; j < hi; j++ {
			out = append(out, jsonObject{keys: []string{"key", "value"}, vals: []any{jsonValue(a.Keys(), int(j)), jsonValue(a.Items(), int(j))}})
		}
		return out
	case *array.List:
		lo, hi := a.ValueOffsets(i)
		out := []any{}
		for j := lo; j < hi; j++ {
			out = append(out, jsonValue(a.ListValues(), int(j)))
		}
		return out
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		o := jsonObject{}
		for f := 0; f < a.NumField(); f++ {
			o.keys = append(o.keys, st.Field(f).Name)
			o.vals = append(o.vals, jsonValue(a.Field(f), i))
		}
		return o
	}
	return nil
}

// jsonObject is a JSON object whose keys keep their order.
type jsonObject struct {
	keys []string
	vals []any
}

func (o jsonObject) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := jsonMarshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := jsonMarshal(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}
