package tests

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// arrayCases are list and struct values as they reach Postgres drivers:
// expr is selected alone; want is the value the driver decodes, as JSON
// (numbers and strings compare by their text, since node-postgres gives
// int8 elements as strings); oid is the column's type in RowDescription;
// duck, when true, checks want against DuckDB's to_json(expr).
var arrayCases = []struct {
	name, expr, want string
	oid              string
	duck             bool
}{
	{"int8", `[1, 2, null]::bigint[]`, `[1, 2, null]`, "1016", true},
	{"int4", `[7, -3]::int[]`, `[7, -3]`, "1016", true},
	{"empty", `[]::bigint[]`, `[]`, "1016", true},
	{"null", `null::bigint[]`, `null`, "1016", true},
	{"float8", `[1.5, null, -0.25]::double[]`, `[1.5, null, -0.25]`, "1022", true},
	{"bool", `[true, false, null]`, `[true, false, null]`, "1000", true},
	{"text", `['a,b', 'say "hi"', '{x}', 'two words', 'NULL', '', null, 'back\slash', 'é ü', 'tab	x']`,
		`["a,b", "say \"hi\"", "{x}", "two words", "NULL", "", null, "back\\slash", "é ü", "tab\tx"]`, "1009", true},
	{"nested", `[[1, 2], [3], []::bigint[], null, [null, 4]]`, `[[1, 2], [3], [], null, [null, 4]]`, "1016", true},
	{"nested-text", `[['a b', null], ['}', ','], ['"']]`, `[["a b", null], ["}", ","], ["\""]]`, "1009", true},
	{"deep", `[[[1], [2, 3]], [[4]]]::bigint[][][]`, `[[[1], [2, 3]], [[4]]]`, "1016", true},
	// Structs are composite (record) text, lists of structs text in array form.
	{"struct", `{'a': 1, 'b': 'x,y', 'c': null::varchar, 'd': 'q"r'}`, `"(1,\"x,y\",,\"q\"\"r\")"`, "25", false},
	{"struct-list", `[{'a': 1, 'b': 'p q'}, null]`, `"{\"(1,\\\"p q\\\")\",NULL}"`, "25", false},
}

// TestClientArrays: LIST values reach psycopg2 and node-postgres as
// Postgres arrays that the drivers decode to native lists (strings with
// commas, quotes, braces, spaces, backslashes, the word NULL and the empty
// string quoted; lists of lists as multi-dimensional arrays), with the
// array type OIDs in RowDescription; node-postgres also in binary format.
// Each value is DuckDB's (to_json) where a list.
func TestClientArrays(t *testing.T) {
	db := openDuckPlain(t)
	_, pg := pgStack(t)
	var stdin strings.Builder
	for _, c := range arrayCases {
		fmt.Fprintf(&stdin, "--@@ %s\nselect %s as v\n", c.name, c.expr)
		if !c.duck {
			continue
		}
		var js *string
		if err := db.QueryRow("select to_json(" + c.expr + ")::varchar").Scan(&js); err != nil {
			t.Fatalf("%s: duckdb: %v", c.name, err)
		}
		got := "null"
		if js != nil {
			got = *js
		}
		if d, w := normJSON(t, got), normJSON(t, c.want); d != w {
			t.Errorf("%s: the expectation %s is not DuckDB's %s", c.name, w, d)
		}
	}
	for _, cl := range pgClients {
		if cl.name == "pgjdbc" {
			continue
		}
		t.Run(cl.name, func(t *testing.T) {
			needClient(t, cl)
			commands := []string{"queries"}
			if cl.name == "node-pg" {
				commands = append(commands, "binary")
			}
			for _, command := range commands {
				list, _ := runClient(t, cl, pg, command, stdin.String())
				seen := map[string]bool{}
				for _, a := range list {
					name, _, _ := strings.Cut(a.Name, "/")
					seen[name] = true
					var c = arrayCases[0]
					for _, x := range arrayCases {
						if x.name == name {
							c = x
						}
					}
					t.Run(a.Name, func(t *testing.T) {
						if a.Error != "" {
							t.Fatalf("%s (SQLSTATE %s)", a.Error, a.SQLState)
						}
						if len(a.Rows) != 1 || len(a.Rows[0]) != 1 || len(a.Types) != 1 {
							t.Fatalf("rows %v, types %v", a.Rows, a.Types)
						}
						if cl.name != "psycopg2" || !strings.Contains(c.name, "struct") { // psycopg2's type_code is the OID too
							if a.Types[0] != c.oid {
								t.Errorf("type %s, want %s", a.Types[0], c.oid)
							}
						}
						got, _ := json.Marshal(a.Rows[0][0])
						if g, w := normJSON(t, string(got)), normJSON(t, c.want); g != w {
							t.Errorf("decoded %s, want %s", g, w)
						}
					})
				}
				for _, c := range arrayCases {
					if !seen[c.name] {
						t.Errorf("%s %s: no answer", command, c.name)
					}
				}
			}
		})
	}
}

// normJSON renders a JSON value with every number, string and boolean as
// a string of its text, so drivers that give int8 as strings compare.
func normJSON(t *testing.T, s string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("bad JSON %s: %v", s, err)
	}
	var norm func(v any) any
	norm = func(v any) any {
		switch x := v.(type) {
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = norm(e)
			}
			return out
		case nil:
			return nil
		case json.Number:
			return strings.TrimSuffix(strings.TrimSuffix(x.String(), ".0"), ".00")
		}
		return fmt.Sprint(v)
	}
	out, _ := json.Marshal(norm(v))
	return string(out)
}
