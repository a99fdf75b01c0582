package plan

import (
	"encoding/json"
	"fmt"
	"math"
)

// valueWire is Value on the wire. JSON numbers have no infinities and no
// NaN, which a constant can hold (1e308 * 10, 0.0 / 0.0 folded, a
// 'nan'::double literal): FX carries them instead of F.
type valueWire struct {
	valueFields
	FX string `json:"fx,omitempty"` // "inf", "-inf" or "nan"
}

type valueFields Value

// MarshalJSON writes v, with a non-finite F as FX.
func (v Value) MarshalJSON() ([]byte, error) {
	w := valueWire{valueFields: valueFields(v)}
	switch {
	case math.IsNaN(v.F):
		w.F, w.FX = 0, "nan"
	case math.IsInf(v.F, 1):
		w.F, w.FX = 0, "inf"
	case math.IsInf(v.F, -1):
		w.F, w.FX = 0, "-inf"
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *Value) UnmarshalJSON(b []byte) error {
	var w valueWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*v = Value(w.valueFields)
	switch w.FX {
	case "":
	case "nan":
		v.F = math.NaN()
	case "inf":
		v.F = math.Inf(1)
	case "-inf":
		v.F = math.Inf(-1)
	default:
		return fmt.Errorf("plan: value: unknown float %q", w.FX)
	}
	return nil
}
