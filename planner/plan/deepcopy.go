package plan

import "reflect"

// deepCopy returns a copy of *v that shares no pointer, slice or map with
// it, following every exported and unexported field by reflection, so a
// field added to a plan type later is copied too. Plan values are trees
// of structs, pointers, slices and maps of plain data; a pointer that
// appears twice is copied twice, as the JSON form of the plan would.
func deepCopy[T any](v *T) *T {
	if v == nil {
		return nil
	}
	c := cloneValue(reflect.ValueOf(v).Elem())
	out := new(T)
	reflect.ValueOf(out).Elem().Set(c)
	return out
}

var exprPtr = reflect.TypeFor[*Expr]()

func cloneValue(v reflect.Value) reflect.Value {
	if v.Type() == exprPtr {
		// Expressions are most of a plan (a 60,000-value IN list is
		// 60,000 of them): copied by hand, as plain data.
		e, _ := v.Interface().(*Expr)
		return reflect.ValueOf(cloneExpr(e))
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(cloneValue(v.Elem()))
		return p
	case reflect.Slice:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		if scalarKind(v.Type().Elem().Kind()) {
			// Plain data (a Bloom filter's bytes): one copy, not one
			// reflected Set per element.
			reflect.Copy(s, v)
			return s
		}
		for i := 0; i < v.Len(); i++ {
			s.Index(i).Set(cloneValue(v.Index(i)))
		}
		return s
	case reflect.Map:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		it := v.MapRange()
		for it.Next() {
			m.SetMapIndex(cloneValue(it.Key()), cloneValue(it.Value()))
		}
		return m
	case reflect.Interface:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(cloneValue(v.Elem()))
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		c.Set(v) // scalars, unexported fields included
		for i := 0; i < v.NumField(); i++ {
			if f := c.Field(i); f.CanSet() {
				f.Set(cloneValue(v.Field(i)))
			}
		}
		return c
	}
	return v
}

// scalarKind reports whether values of kind k hold no pointers, so a
// slice of them is copied whole.
func scalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}

// cloneExpr deep-copies e. Expr and Value hold only scalars besides Args
// and Value (TestCloneExprFields fails when a field is added, so that
// this copy is kept complete).
func cloneExpr(e *Expr) *Expr {
	if e == nil {
		return nil
	}
	c := *e
	if e.Value != nil {
		v := *e.Value
		c.Value = &v
	}
	if e.Args != nil {
		c.Args = make([]*Expr, len(e.Args))
		for i, a := range e.Args {
			c.Args[i] = cloneExpr(a)
		}
	}
	return &c
}
