package planner

import (
	"reflect"
	"testing"
)

// TestCloneSharesNothing: a cloned graph of every golden plan is equal to
// the original and shares no pointer, slice or map with it, so a rule
// rewriting the copy cannot change the plan it came from.
func TestCloneSharesNothing(t *testing.T) {
	for _, f := range planCases(t) {
		g := planFile(t, f, Options{}).Graph
		c, err := g.Clone()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, c) {
			t.Fatalf("%s: clone differs", f)
		}
		if path := sharedPath(reflect.ValueOf(g), reflect.ValueOf(c), "graph"); path != "" {
			t.Fatalf("%s: clone shares %s with the original", f, path)
		}
	}
}

// sharedPath returns the path of the first pointer, slice or map that a
// and b (equal values) share, "" when none.
func sharedPath(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Pointer, reflect.Map:
		if a.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		if a.Kind() == reflect.Map {
			it := a.MapRange()
			for it.Next() {
				if p := sharedPath(it.Value(), b.MapIndex(it.Key()), path+"[key]"); p != "" {
					return p
				}
			}
			return ""
		}
		return sharedPath(a.Elem(), b.Elem(), path)
	case reflect.Slice:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			return path
		}
		for i := 0; i < a.Len(); i++ {
			if p := sharedPath(a.Index(i), b.Index(i), path+"[]"); p != "" {
				return p
			}
		}
	case reflect.Interface:
		if !a.IsNil() {
			return sharedPath(a.Elem(), b.Elem(), path)
		}
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if p := sharedPath(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
				return p
			}
		}
	}
	return ""
}
