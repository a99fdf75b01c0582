package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestFastCSVJSON checks the allocation-free CSV and JSON printers against
// the reference they replaced (encoding/csv over formatValue, and
// encoding/json over jsonValue) on random rows of every scalar type, with
// NULLs and strings that need quoting or escaping.
func TestFastCSVJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	strs := []string{"", " lead", "a,b", `q"uote`, "line\nbreak", "cr\rx", `\.`, "<tag>&amp;", "ünïcødé", "\ttab", "plain", "\u2028", "x\x01y", "bad\xffutf8", "\b\f\\back", "\u2029\u00e9"}
	fields := []arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "d", Type: &arrow.Decimal64Type{Precision: 18, Scale: 3}, Nullable: true},
		{Name: "w", Type: &arrow.Decimal128Type{Precision: 38, Scale: 2}, Nullable: true},
		{Name: "dt", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, // a repeated name
	}
	schema := arrow.NewSchema(fields, nil)
	bl := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bl.Release()
	for range 3000 {
		for c, fb := range bl.Fields() {
			if r.IntN(8) == 0 {
				fb.AppendNull()
				continue
			}
			switch b := fb.(type) {
			case *array.Int64Builder:
				b.Append(r.Int64() >> r.IntN(64))
			case *array.Int32Builder:
				b.Append(int32(r.Uint32()))
			case *array.Float64Builder:
				b.Append([]float64{0, -0.5, 1e300, 3.25, 1e-7, r.NormFloat64() * 1e6}[r.IntN(6)])
			case *array.Decimal64Builder:
				b.Append(decimal.Decimal64(r.Int64() >> r.IntN(64)))
			case *array.Decimal128Builder:
				if r.IntN(3) == 0 {
					b.Append(decimal128.New(r.Int64N(1<<40)-(1<<39), r.Uint64()))
				} else {
					b.Append(decimal128.FromI64(r.Int64() >> r.IntN(64)))
				}
			case *array.Date32Builder:
				b.Append(arrow.Date32(r.Int32N(200000) - 100000))
			case *array.TimestampBuilder:
				b.Append(arrow.Timestamp(r.Int64N(1<<56) - (1 << 55)))
			case *array.BooleanBuilder:
				b.Append(r.IntN(2) == 0)
			case *array.StringBuilder:
				b.Append(strs[r.IntN(len(strs))])
			default:
				t.Fatalf("column %d: builder %T", c, fb)
			}
		}
	}
	rec := bl.NewRecordBatch()
	defer rec.Release()
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}

	var want bytes.Buffer
	cw := csv.NewWriter(&want)
	_ = cw.Write(names)
	row := make([]string, len(names))
	for i := 0; i < int(rec.NumRows()); i++ {
		for c := range row {
			v, ok := formatValue(rec.Column(c), i)
			if !ok {
				v = ""
			}
			row[c] = v
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	var got bytes.Buffer
	if err := writeResult(&got, "csv", schema, []arrow.RecordBatch{rec}); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("csv differs from encoding/csv's:\n%s", firstDiff(got.String(), want.String()))
	}

	want.Reset()
	keys := jsonKeys(names)
	for i := 0; i < int(rec.NumRows()); i++ {
		want.WriteByte('{')
		for c := range keys {
			if c > 0 {
				want.WriteByte(',')
			}
			k, _ := json.Marshal(keys[c])
			v, err := json.Marshal(jsonValue(rec.Column(c), i))
			if err != nil {
				t.Fatal(err)
			}
			want.Write(k)
			want.WriteByte(':')
			want.Write(v)
		}
		want.WriteString("}\n")
	}
	got.Reset()
	if err := writeResult(&got, "json", schema, []arrow.RecordBatch{rec}); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("json differs from encoding/json's:\n%s", firstDiff(got.String(), want.String()))
	}

	// A NaN is refused in JSON as before (encoding/json has no literal).
	fb := array.NewFloat64Builder(memory.DefaultAllocator)
	fb.Append(math.NaN())
	nan := fb.NewArray()
	defer nan.Release()
	nrec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "f", Type: arrow.PrimitiveTypes.Float64}}, nil), []arrow.Array{nan}, 1)
	defer nrec.Release()
	if err := writeResult(&got, "json", nrec.Schema(), []arrow.RecordBatch{nrec}); err == nil {
		t.Fatal("json of NaN: no error")
	}
}

func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-80)
	return "got  ..." + a[lo:min(len(a), i+80)] + "\nwant ..." + b[lo:min(len(b), i+80)]
}
