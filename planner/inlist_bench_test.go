package planner

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkPlanLongInList plans a query with a 60,000-value IN list (a
// filter a BI tool sends from a pasted id list): the list must be one hash
// set in the plan, planned in well under a second.
func BenchmarkPlanLongInList(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("select count(*) from lineitem where l_orderkey in (")
	for i := range 60000 {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.Itoa(i * 7))
	}
	sb.WriteString(") and l_quantity > 3")
	q := sb.String()
	// The baseline, in the same run: parsing the text alone (pg_query),
	// which any plan must do.
	start := time.Now()
	if _, _, err := parse(q); err != nil {
		b.Fatal(err)
	}
	parseTime := time.Since(start)
	planStart := time.Now()
	n := 0
	for b.Loop() {
		if _, err := Plan(context.Background(), q, testCatalog, Options{}); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(time.Since(planStart))/float64(n)/float64(parseTime), "x_parse")
}
