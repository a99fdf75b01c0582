package plan

import "testing"

// TestParseTypeName: the one parser of SQL type names reads every
// spelling of the table, with and without modifiers.
func TestParseTypeName(t *testing.T) {
	for text, want := range map[string]DataType{
		"BIGINT": Int64Type, "hugeint": Int64Type, "int32": Int64Type, "double precision": Float64Type,
		"varchar(10)": StringType, "text": StringType, "timestamp": TimestampType, "date": DateType,
		"decimal(12, 2)": DecimalType(12, 2), "numeric(5)": DecimalType(5, 0), "decimal": DefaultDecimal,
		"boolean": BoolType,
	} {
		got, err := ParseTypeName(text)
		if err != nil || got != want {
			t.Errorf("ParseTypeName(%q) = %s, %v; want %s", text, got, err, want)
		}
	}
	for _, text := range []string{"blob", "int(3)", "decimal(40,2)", "decimal(2,3)", "decimal(a)", "varchar("} {
		if got, err := ParseTypeName(text); err == nil {
			t.Errorf("ParseTypeName(%q) = %s, want an error", text, got)
		}
	}
	if got := DecimalType(12, 2).SQLName(); got != "decimal(12,2)" {
		t.Errorf("SQLName = %s", got)
	}
}
