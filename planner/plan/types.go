// Package plan holds sluice's serializable physical plan: data types,
// expressions, operator trees (plan fragments) and the stage graph.
//
// It is the contract between the planner (which builds plans from SQL) and
// the function runtime (which executes fragments). It has no dependency on
// the SQL front end, so the lean function binary can link it.
package plan

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// TypeID names one of the engine's value types. The engine keeps a small,
// closed set of types so every kernel is written once per type.
type TypeID string

const (
	Bool    TypeID = "bool"
	Int64   TypeID = "int64"   // all SQL integer types widen to int64
	Float64 TypeID = "float64" // REAL, DOUBLE PRECISION
	// Decimal is an exact decimal scaled by 10^Scale: an int64 (arrow
	// Decimal64) for precision <= 18, 128 bits (arrow Decimal128) above.
	Decimal TypeID = "decimal"
	String  TypeID = "string" // VARCHAR, CHAR, TEXT (utf8)
	Date    TypeID = "date"   // days since 1970-01-01 (arrow date32)
	// Timestamp is microseconds since 1970-01-01 00:00:00, without a time
	// zone (arrow Timestamp(us)).
	Timestamp TypeID = "timestamp"
	// Interval is a constant-only type: an INTERVAL literal (Value.Months,
	// Value.Days and Value.I microseconds) that is an operand of date or
	// timestamp arithmetic. No column holds intervals.
	Interval TypeID = "interval"
	Null     TypeID = "null" // type of an untyped NULL literal

	// Nested types. Their child types (DataType.Children) are engine
	// types too, mapped from Arrow as top-level types are, at any depth.
	List   TypeID = "list"   // a list of one element type (arrow List)
	Struct TypeID = "struct" // named fields (arrow Struct)
	Map    TypeID = "map"    // keys to values (arrow Map)
)

// MaxDecimalPrecision is the largest decimal precision (arrow Decimal128).
// Arithmetic whose result would not fit fails with ErrDecimalOverflow
// rather than losing digits.
const MaxDecimalPrecision = 38

// MaxDecimal64Precision is the largest precision kept in the int64 layout
// (arrow Decimal64); wider decimals are 128-bit.
const MaxDecimal64Precision = 18

// DataType is a value type. Precision and Scale are set for Decimal only;
// Sub for nested types only.
type DataType struct {
	ID        TypeID `json:"id"`
	Precision int    `json:"p,omitempty"`
	Scale     int    `json:"s,omitempty"`
	// Sub is the child fields of a nested type in their canonical JSON
	// encoding (see Children): a string, so that DataType stays a
	// comparable value (== compares nested types by their structure) and
	// serializes with the plan. A list has one child "element", a map
	// the two "key" and "value", a struct one per field.
	Sub string `json:"sub,omitempty"`
}

func (t DataType) String() string {
	switch t.ID {
	case Decimal:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case List, Struct, Map:
		return t.nestedName()
	}
	return string(t.ID)
}

// Wide reports whether t is a decimal in the 128-bit layout.
func (t DataType) Wide() bool { return t.ID == Decimal && t.Precision > MaxDecimal64Precision }

// IsNumeric reports whether t is Int64, Float64 or Decimal.
func (t DataType) IsNumeric() bool {
	return t.ID == Int64 || t.ID == Float64 || t.ID == Decimal
}

// Convenience constructors.
var (
	BoolType    = DataType{ID: Bool}
	Int64Type   = DataType{ID: Int64}
	Float64Type = DataType{ID: Float64}
	StringType  = DataType{ID: String}
	DateType    = DataType{ID: Date}
	// TimestampType is a timestamp in microseconds.
	TimestampType = DataType{ID: Timestamp}
	// IntervalType is the type of an INTERVAL literal.
	IntervalType = DataType{ID: Interval}
	NullType     = DataType{ID: Null}
)

// DecimalType returns decimal(p,s), with p capped at MaxDecimalPrecision.
func DecimalType(p, s int) DataType {
	if p > MaxDecimalPrecision {
		p = MaxDecimalPrecision
	}
	return DataType{ID: Decimal, Precision: p, Scale: s}
}

// Arrow returns the in-memory Arrow type for t. Decimals are arrow
// Decimal64 up to 18 digits and Decimal128 above; dates are Date32;
// timestamps Timestamp(us) without a zone; strings are (32-bit offset)
// String.
func (t DataType) Arrow() arrow.DataType {
	switch t.ID {
	case Bool:
		return arrow.FixedWidthTypes.Boolean
	case Int64:
		return arrow.PrimitiveTypes.Int64
	case Float64:
		return arrow.PrimitiveTypes.Float64
	case Decimal:
		if t.Wide() {
			return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}
		}
		return &arrow.Decimal64Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}
	case Timestamp:
		return ArrowTimestamp
	case String:
		return arrow.BinaryTypes.String
	case Date:
		return arrow.FixedWidthTypes.Date32
	case List:
		return arrow.ListOfField(arrow.Field{Name: "element", Type: t.Elem().Arrow(), Nullable: true})
	case Map:
		return arrow.MapOf(t.Key().Arrow(), t.Value().Arrow())
	case Struct:
		cs := t.Children()
		fs := make([]arrow.Field, len(cs))
		for i, c := range cs {
			fs[i] = arrow.Field{Name: c.Name, Type: c.Type.Arrow(), Nullable: true}
		}
		return arrow.StructOf(fs...)
	default:
		return arrow.Null
	}
}

// ArrowTimestamp is the engine's timestamp layout: microseconds, no zone
// (arrow-go's FixedWidthTypes.Timestamp_us carries a UTC zone).
var ArrowTimestamp = &arrow.TimestampType{Unit: arrow.Microsecond}

// FromArrow maps an Arrow type (as read from Parquet or IPC) to the engine
// type it is converted to on read. ok is false for unsupported types.
func FromArrow(t arrow.DataType) (DataType, bool) {
	switch tt := t.(type) {
	case *arrow.BooleanType:
		return BoolType, true
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type: // uint64 above the int64 range fails on read
		return Int64Type, true
	case *arrow.Float32Type, *arrow.Float64Type:
		return Float64Type, true
	case *arrow.Decimal128Type:
		// Up to 18 digits it is narrowed to the int64 layout on read.
		return DecimalType(int(tt.Precision), int(tt.Scale)), true
	case *arrow.Decimal64Type:
		return DecimalType(int(tt.Precision), int(tt.Scale)), true
	case *arrow.StringType, *arrow.LargeStringType:
		return StringType, true
	case *arrow.Date32Type:
		return DateType, true
	case *arrow.TimestampType:
		// Any unit and zone: converted to microseconds on read (a UTC
		// adjusted timestamp keeps its UTC wall clock).
		return TimestampType, true
	case *arrow.NullType:
		return NullType, true
	case arrow.ExtensionType:
		if IsUUID(tt) {
			return StringType, true // its canonical text, as DuckDB prints it
		}
		return DataType{}, false
	case *arrow.ListType:
		e, ok := FromArrow(tt.Elem())
		return ListOf(e), ok
	case *arrow.LargeListType:
		e, ok := FromArrow(tt.Elem())
		return ListOf(e), ok
	case *arrow.MapType:
		k, ok1 := FromArrow(tt.KeyType())
		v, ok2 := FromArrow(tt.ItemType())
		return MapOf(k, v), ok1 && ok2
	case *arrow.StructType:
		fs := make([]Field, tt.NumFields())
		for i, f := range tt.Fields() {
			ft, ok := FromArrow(f.Type)
			if !ok {
				return DataType{}, false
			}
			fs[i] = Field{Name: f.Name, Type: ft, Nullable: true}
		}
		return StructOf(fs), len(fs) > 0
	}
	return DataType{}, false
}

// IsUUID reports whether t is Arrow's UUID extension type (16 bytes), as
// arrow-go reads a Parquet UUID column.
func IsUUID(t arrow.DataType) bool {
	et, ok := t.(arrow.ExtensionType)
	if !ok || et.ExtensionName() != "arrow.uuid" {
		return false
	}
	fb, ok := et.StorageType().(*arrow.FixedSizeBinaryType)
	return ok && fb.ByteWidth == 16
}

// Field is a named, typed column of a schema.
type Field struct {
	Name     string   `json:"name"`
	Type     DataType `json:"type"`
	Nullable bool     `json:"nullable,omitempty"`
}

// Schema is an ordered list of fields.
type Schema []Field

// Arrow returns the Arrow schema for s.
func (s Schema) Arrow() *arrow.Schema {
	fs := make([]arrow.Field, len(s))
	for i, f := range s {
		fs[i] = arrow.Field{Name: f.Name, Type: f.Type.Arrow(), Nullable: true}
	}
	return arrow.NewSchema(fs, nil)
}
