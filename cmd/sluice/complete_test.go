package main

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"testing"
)

// TestCompleter: the candidates Tab offers for the text before the
// cursor, exactly, from a fixed catalog and a fixed keyword and function
// list.
func TestCompleter(t *testing.T) {
	cat := catalogNames{
		"orders":   {"o_orderkey", "o_custkey", "o_orderdate"},
		"customer": {"c_custkey", "c_name"},
		"nation":   {"n_nationkey", "n_name"},
	}
	c := &completer{keywords: []string{"from", "full", "group", "order", "select", "where"},
		functions: []string{"count", "coalesce", "concat", "nullif", "row_number"}}
	tests := []struct {
		before, word string
		want         []string
	}{
		{"sel", "sel", []string{"select"}},
		{"SEL", "SEL", []string{"SELECT"}},
		{"select co", "co", []string{"coalesce", "concat", "count"}},
		{"select * from ", "", []string{"customer", "nation", "orders"}},
		{"select * from o", "o", []string{"orders"}},
		{"select * from orders join n", "n", []string{"nation"}},
		{"select * from orders o join customer c on o.", "o.", []string{"o.o_custkey", "o.o_orderdate", "o.o_orderkey"}},
		{"select orders.o_c", "orders.o_c", []string{"orders.o_custkey"}},
		{"select c.c_n", "c.c_n", nil}, // c is no alias yet: nothing
		{"select o_ from orders where o_", "o_", []string{"o_custkey", "o_orderdate", "o_orderkey"}},
		{"select n_", "n_", []string{"n_name", "n_nationkey"}}, // no table named yet: every table's columns
		{"select * from customer where c", "c", []string{"c_custkey", "c_name", "coalesce", "concat", "count", "customer"}},
		{"select 'from ' || n", "n", []string{"n_name", "n_nationkey", "nation", "nullif"}}, // a string is no keyword
		{"select r", "r", []string{"row_number"}},
		{`\d `, "", []string{"customer", "nation", "orders"}},
		{"select * from nosuch.", "nosuch.", nil},
		{"sele", "sele", []string{"select"}},
		{"select", "select", nil}, // a whole word: nothing to add
	}
	for _, tt := range tests {
		t.Run(tt.before, func(t *testing.T) {
			word, got := c.candidates(tt.before, cat)
			if word != tt.word || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("candidates(%q) = %q, %q; want %q, %q", tt.before, word, got, tt.word, tt.want)
			}
		})
	}
}

// TestCompleterDo: readline gets the remainders after the word, the
// statement typed on earlier lines counts, and the catalog is fetched once
// until invalidated (after a statement ran).
func TestCompleterDo(t *testing.T) {
	loads := 0
	cat := catalogNames{"orders": {"o_orderkey"}}
	c := newCompleter(func(context.Context) (catalogNames, error) {
		loads++
		return cat, nil
	})
	c.setTyped("select o_orderkey\n")
	got, n := c.Do([]rune("from or"), 7)
	if n != 2 || len(got) != 1 || string(got[0]) != "ders" {
		t.Fatalf("Do(from or) = %q, %d; want [ders], 2", got, n)
	}
	got, n = c.Do([]rune("from orders where orders.o_o"), 28)
	if n != 3 || len(got) != 1 || string(got[0]) != "rderkey" {
		t.Fatalf("Do(orders.o_o) = %q, %d; want [rderkey], 3", got, n)
	}
	if loads != 1 {
		t.Fatalf("catalog fetched %d times, want once", loads)
	}
	cat = catalogNames{"orders": {"o_orderkey"}, "orders2": {"x"}}
	c.invalidate()
	c.setTyped("")
	got, _ = c.Do([]rune("select * from or"), 16)
	if loads != 2 || len(got) != 2 || string(got[0]) != "ders" || string(got[1]) != "ders2" {
		t.Fatalf("after invalidate: %q, %d loads; want [ders ders2], 2 loads", got, loads)
	}

	// A catalog that cannot be fetched still completes keywords.
	failing := newCompleter(func(context.Context) (catalogNames, error) { return nil, errors.New("down") })
	if got, n := failing.Do([]rune("selec"), 5); n != 5 || len(got) != 1 || string(got[0]) != "t" {
		t.Fatalf("without a catalog: %q, %d", got, n)
	}
}

// TestCompleterLists: the keyword list is sorted (isKeyword searches it)
// and the function list holds scalar, aggregate and window functions.
func TestCompleterLists(t *testing.T) {
	if !sort.StringsAreSorted(sqlKeywords) {
		t.Fatal("sqlKeywords is not sorted")
	}
	fns := functionNames()
	for _, want := range []string{"abs", "upper", "count", "median", "string_agg", "row_number", "lag"} {
		if i := sort.SearchStrings(fns, want); i == len(fns) || fns[i] != want {
			t.Errorf("functionNames lacks %s", want)
		}
	}
}
