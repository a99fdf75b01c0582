package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicedb/sluice/function/exec"
	"github.com/sluicedb/sluice/planner/plan"
)

// TestNullRejectionEveryFunction puts every library function, in every
// argument position of its first signature, over the NULL-padded side of
// a LEFT JOIN under WHERE f(...) IS NOT NULL, and compares the row count
// with DuckDB's. The planner turns the join inner only where the
// predicate rejects the padded rows, which it decides from the function
// registry's NULL flags: a function flagged strict that is not (greatest
// was) loses rows, and the count differs.
func TestNullRejectionEveryFunction(t *testing.T) {
	dir := dataDir(t, *sfFlag)
	db := openDuck(t, dir)
	st := startStack(t, "", nil)
	if _, err := st.LoadDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	// padded: an expression of each parameter type over region (the
	// padded side: only ASIA joins); literal: candidates for the others.
	padded := map[plan.TypeID]string{
		plan.Int64: "r.r_regionkey", plan.Float64: "cast(r.r_regionkey as double)",
		plan.String: "r.r_name", plan.Date: "(date '1995-01-01' + r.r_regionkey)",
		plan.Timestamp: "cast(date '1995-01-01' + r.r_regionkey as timestamp)",
		plan.Decimal:   "cast(r.r_regionkey as decimal(12,2))", plan.Bool: "(r.r_regionkey > 1)",
		exec.AnyType: "r.r_regionkey", exec.NumericType: "r.r_regionkey",
		exec.ToString: "r.r_name", exec.SameType: "r.r_regionkey",
	}
	literal := map[plan.TypeID][]string{
		plan.Int64: {"n.n_nationkey + 1", "3"}, plan.Float64: {"2.5", "cast(n.n_nationkey as double)"},
		plan.String: {"'year'", "n.n_name", "'%Y'", "'a'", "','"},
		plan.Date:   {"date '1996-03-01'"}, plan.Timestamp: {"timestamp '1996-03-01 10:00:00'"},
		plan.Decimal: {"cast(1.5 as decimal(12,2))"}, plan.Bool: {"true"},
		exec.AnyType: {"n.n_nationkey"}, exec.NumericType: {"n.n_nationkey"},
		exec.ToString: {"n.n_name"}, exec.SameType: {"n.n_nationkey"},
	}
	const from = "from nation n left join region r on n.n_regionkey = r.r_regionkey and r.r_name = 'ASIA'"
	ctx := context.Background()
	adaptive := true
	sluiceCount := func(q string) (string, error) {
		c, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		res, err := st.Query(c, q, &adaptive, nil)
		if err != nil {
			return "", err
		}
		defer res.Release()
		rows := sluiceRows(res)
		if len(rows) != 1 {
			return "", fmt.Errorf("%d rows", len(rows))
		}
		return fmt.Sprint(rows[0][0]), nil
	}
	checked, skipped := 0, 0
	for _, f := range exec.Functions() {
		s := f.Signatures[0]
		if len(s.Params) == 0 {
			continue
		}
		for k := range s.Params {
			var tried []string
			done := false
			// Try the literal candidates of the other positions until
			// DuckDB takes the call.
			for c := 0; c < 5 && !done; c++ {
				args := make([]string, len(s.Params))
				ok := true
				for i, p := range s.Params {
					if i == k {
						args[i] = padded[p]
					} else if ls := literal[p]; len(ls) > 0 {
						args[i] = ls[min(c, len(ls)-1)]
					} else {
						ok = false
					}
				}
				if !ok || args[k] == "" {
					break
				}
				call := f.Name + "(" + strings.Join(args, ", ") + ")"
				if f.Name == "||" {
					call = "(" + strings.Join(args, " || ") + ")"
				}
				q := "select count(*) " + from + " where " + call + " is not null"
				drows, err := duckQuery(context.Background(), db, q)
				if err != nil {
					tried = append(tried, err.Error())
					continue
				}
				done = true
				got, err := sluiceCount(q)
				if err != nil {
					t.Logf("%s: sluice: %v (DuckDB runs it)", q, err)
					skipped++
					break
				}
				want := fmt.Sprint(drows[0][0])
				if got != want {
					t.Errorf("%s: sluice %s rows, DuckDB %s (flag %s strict=%v)", q, got, want, f.Name, f.Strict())
				}
				checked++
			}
			if !done {
				skipped++
			}
		}
	}
	t.Logf("%d function positions checked against DuckDB, %d skipped (no call both engines take)", checked, skipped)
	if checked < 60 {
		t.Errorf("only %d function positions checked", checked)
	}
}
