package plan

import (
	"encoding/binary"
	"math"
)

// Key is a compact string that two expressions share exactly when they
// are structurally equal (every field, arguments in order), for the
// planner's maps of equal expressions. It is what a JSON encoding would
// compare, without the encoder's reflection: a 60,000-value IN list is
// keyed once per rule instead of re-marshalled.
func (e *Expr) Key() string { return string(e.AppendKey(nil)) }

// AppendKey appends e's key (see Key) to b.
func (e *Expr) AppendKey(b []byte) []byte {
	if e == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = appendKeyString(b, string(e.Op))
	b = appendKeyString(b, string(e.Type.ID))
	b = binary.AppendVarint(b, int64(e.Type.Precision))
	b = binary.AppendVarint(b, int64(e.Type.Scale))
	b = binary.AppendVarint(b, int64(e.Col))
	b = appendKeyString(b, e.Name)
	if v := e.Value; v == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1, keyBool(v.Null), keyBool(v.B))
		b = binary.AppendVarint(b, v.I)
		b = binary.AppendVarint(b, v.H)
		b = binary.AppendVarint(b, int64(v.Months))
		b = binary.AppendVarint(b, int64(v.Days))
		b = binary.AppendUvarint(b, math.Float64bits(v.F))
		b = appendKeyString(b, v.S)
	}
	b = appendKeyString(b, e.Field)
	b = appendKeyString(b, e.Func)
	b = append(b, keyBool(e.Negated))
	b = binary.AppendUvarint(b, uint64(len(e.Args)))
	for _, a := range e.Args {
		b = a.AppendKey(b)
	}
	return b
}

func appendKeyString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func keyBool(v bool) byte {
	if v {
		return 1
	}
	return 0
}
