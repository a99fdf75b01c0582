package iceberg

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	iceberggo "github.com/apache/iceberg-go"

	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

func TestMetadataKey(t *testing.T) {
	ctx := context.Background()
	b := objstore.NewMem("lake")
	put := func(k string) {
		if err := b.Put(ctx, k, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := MetadataKey(ctx, b, "t/"); !errors.Is(err, ErrNoMetadata) {
		t.Fatalf("empty folder: %v", err)
	}
	put("t/metadata/00001-a.metadata.json")
	put("t/metadata/00010-b.metadata.json")
	put("t/metadata/00002-c.metadata.json")
	put("t/metadata/snap-1.avro")
	put("t/metadata/old/00099-x.metadata.json") // not in metadata/ itself
	if k, err := MetadataKey(ctx, b, "t/"); err != nil || k != "t/metadata/00010-b.metadata.json" {
		t.Fatalf("highest version: %q %v", k, err)
	}
	put("u/metadata/v1.metadata.json")
	put("u/metadata/v2.metadata.json")
	put("u/metadata/v3.metadata.json")
	if err := b.Put(ctx, "u/metadata/version-hint.text", []byte("2\n")); err != nil {
		t.Fatal(err)
	}
	if k, err := MetadataKey(ctx, b, "u"); err != nil || k != "u/metadata/v2.metadata.json" {
		t.Fatalf("version hint: %q %v", k, err)
	}
	if k, err := MetadataKey(ctx, b, "u/metadata/v1.metadata.json"); err != nil || k != "u/metadata/v1.metadata.json" {
		t.Fatalf("a metadata file: %q %v", k, err)
	}
	if _, err := MetadataKey(ctx, b, "u/metadata/v9.metadata.json"); err == nil {
		t.Fatal("a missing metadata file: no error")
	}
}

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Ref
	}{
		{"123", Ref{SnapshotID: 123}},
		{"2024-03-01 10:00:00", Ref{AsOf: time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)}},
		{"2024-03-01 10:00:00.250", Ref{AsOf: time.Date(2024, 3, 1, 10, 0, 0, 250e6, time.UTC)}},
		{"2024-03-01T10:00:00+02:00", Ref{AsOf: time.Date(2024, 3, 1, 8, 0, 0, 0, time.UTC)}},
		{"2024-03-01", Ref{AsOf: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)}},
	} {
		got, err := ParseRef(tc.in)
		if err != nil || got.SnapshotID != tc.want.SnapshotID || !got.AsOf.Equal(tc.want.AsOf) {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParseRef("yesterday"); err == nil {
		t.Error("ParseRef(yesterday): no error")
	}
}

func TestFilter(t *testing.T) {
	id := plan.Column(0, "id", plan.Int64Type)
	name := plan.Column(1, "name", plan.StringType)
	d := plan.Column(2, "d", plan.DateType)
	i64 := func(v int64) *plan.Expr { return plan.Literal(plan.Value{I: v}, plan.Int64Type) }
	str := func(s string) *plan.Expr { return plan.Literal(plan.Value{S: s}, plan.StringType) }
	cols := []string{"id", "name", "d"}
	for _, tc := range []struct {
		e    *plan.Expr
		want string
	}{
		{nil, "AlwaysTrue()"},
		{plan.Call(plan.OpEq, plan.BoolType, id, i64(5)), "Equal"},
		{plan.Call(plan.OpLt, plan.BoolType, i64(5), id), "GreaterThan"}, // 5 < id is id > 5
		{plan.Call(plan.OpAnd, plan.BoolType, plan.Call(plan.OpEq, plan.BoolType, name, str("x")),
			plan.Call(plan.OpLike, plan.BoolType, name, str("x%"))), "Equal"}, // LIKE dropped from the AND
		{plan.Call(plan.OpOr, plan.BoolType, plan.Call(plan.OpEq, plan.BoolType, name, str("x")),
			plan.Call(plan.OpLike, plan.BoolType, name, str("x%"))), "AlwaysTrue()"}, // an OR with an unknown part keeps all
		{plan.Call(plan.OpNot, plan.BoolType, plan.Call(plan.OpAnd, plan.BoolType, plan.Call(plan.OpEq, plan.BoolType, name, str("x")),
			plan.Call(plan.OpLike, plan.BoolType, name, str("x%")))), "AlwaysTrue()"}, // NOT of a partial translation
		{plan.Call(plan.OpEq, plan.BoolType, d, plan.Literal(plan.Value{I: 19783}, plan.DateType)), "Equal"},
		{plan.Call(plan.OpEq, plan.BoolType, id, plan.Literal(plan.Value{F: 1.5}, plan.Float64Type)), "AlwaysTrue()"}, // mixed types
		{&plan.Expr{Op: plan.OpIn, Type: plan.BoolType, Args: []*plan.Expr{id, i64(1), i64(2)}}, "Or"},
		{&plan.Expr{Op: plan.OpIsNull, Type: plan.BoolType, Args: []*plan.Expr{name}}, "IsNull"},
	} {
		got := Filter(tc.e, cols).String()
		if !strings.Contains(got, tc.want) {
			t.Errorf("Filter(%v) = %s, want %s", tc.e, got, tc.want)
		}
	}
}

// TestFilterBinds: translated filters bind to the Iceberg types sluice's
// types come from (int and long to BIGINT, timestamp and timestamptz to
// TIMESTAMP, date, string, double).
func TestFilterBinds(t *testing.T) {
	sc := iceberggo.NewSchema(0,
		iceberggo.NestedField{ID: 1, Name: "i", Type: iceberggo.PrimitiveTypes.Int32},
		iceberggo.NestedField{ID: 2, Name: "l", Type: iceberggo.PrimitiveTypes.Int64},
		iceberggo.NestedField{ID: 3, Name: "ts", Type: iceberggo.PrimitiveTypes.Timestamp},
		iceberggo.NestedField{ID: 4, Name: "tz", Type: iceberggo.PrimitiveTypes.TimestampTz},
		iceberggo.NestedField{ID: 5, Name: "d", Type: iceberggo.PrimitiveTypes.Date},
		iceberggo.NestedField{ID: 6, Name: "s", Type: iceberggo.PrimitiveTypes.String},
		iceberggo.NestedField{ID: 7, Name: "f", Type: iceberggo.PrimitiveTypes.Float64},
	)
	cols, _, err := Columns(sc)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	lits := []plan.Value{{I: 5}, {I: 5}, {I: 1_700_000_000_000_000}, {I: 1_700_000_000_000_000}, {I: 19000}, {S: "x"}, {F: 1.5}}
	for i, c := range cols {
		e := plan.Call(plan.OpGe, plan.BoolType, plan.Column(i, c.Name, c.Type), plan.Literal(lits[i], c.Type))
		f := Filter(e, names)
		if _, ok := f.(iceberggo.AlwaysTrue); ok {
			t.Errorf("%s: not translated", c.Name)
			continue
		}
		if _, err := iceberggo.BindExpr(sc, f, false); err != nil {
			t.Errorf("%s (%s as %s): %v", c.Name, sc.Field(i).Type, c.Type, err)
		}
	}
}
