package tests

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/catalog"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

var (
	estDump = flag.String("est-dump", "", "TestEstimatesTPCDS: print the estimates of this query number, or all")
	estSQL  = flag.String("est-sql", "", "TestEstimatesDump: the query")
	estData = flag.String("est-data", "", "TestEstimatesDump: a folder of tables")
)

// footerCatalog is the catalog of a folder of tables, each registered from
// its files' footers as CREATE EXTERNAL TABLE registers it.
type footerCatalog map[string]*planner.TableInfo

func (c footerCatalog) Table(_ context.Context, name string) (*planner.TableInfo, error) {
	if t, ok := c[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("%q: %w", name, planner.ErrUnknownTable)
}

func loadFooterCatalog(t *testing.T, root string) footerCatalog {
	t.Helper()
	ctx := context.Background()
	b := objstore.NewMem("b")
	cat := footerCatalog{}
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(root, d.Name(), "*.parquet"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Put(ctx, d.Name()+"/"+filepath.Base(f), data); err != nil {
				t.Fatal(err)
			}
		}
		tb, err := catalog.Inspect(ctx, b, d.Name(), d.Name()+"/")
		if err != nil {
			t.Fatal(err)
		}
		cat[d.Name()] = &planner.TableInfo{Name: tb.Name, Format: tb.Format, Columns: tb.Columns, Rows: tb.Rows, Bytes: tb.Bytes, Distinct: tb.Distinct}
	}
	return cat
}

var (
	estRows  = regexp.MustCompile(`rows≈([0-9.e+]+)`)
	estScans = regexp.MustCompile(`Scan: ([a-z_]+)`)
)

// TestEstimatesTPCDS plans the 99 TPC-DS queries against the footers of
// the SF 0.01 files and checks that no operator's estimate passes ten times
// the rows of the largest table the query reads: the static partition
// count follows the largest estimate, and chains of joins over aggregates
// once compounded to 10^14 rows (q64, 4,096 partitions at SF 0.01).
func TestEstimatesTPCDS(t *testing.T) {
	root, qs := tpcdsData(t, 0.01)
	cat := loadFooterCatalog(t, root)
	for _, q := range qs {
		p, err := planner.Plan(context.Background(), q.SQL, cat, planner.Options{})
		if err != nil {
			t.Fatalf("q%02d: %v", q.Nr, err)
		}
		worst := 0.0
		for _, m := range estRows.FindAllStringSubmatch(p.Estimates, -1) {
			v, _ := strconv.ParseFloat(m[1], 64)
			worst = max(worst, v)
		}
		parts := 1
		for _, s := range p.Graph.Stages {
			parts = max(parts, s.Output.Count)
		}
		largest := 0.0
		for _, m := range estScans.FindAllStringSubmatch(p.Estimates, -1) {
			if tb := cat[m[1]]; tb != nil {
				largest = max(largest, float64(tb.Rows))
			}
		}
		t.Logf("q%02d max rows %.3g (largest table %.3g) partitions %d", q.Nr, worst, largest, parts)
		if worst > 10*largest {
			t.Errorf("q%02d: an estimate of %.3g rows, more than 10 times the largest table's %.3g\n%s", q.Nr, worst, largest, p.Estimates)
		}
		if *estDump == "all" || *estDump == strconv.Itoa(q.Nr) {
			t.Logf("q%02d\n%s", q.Nr, p.Estimates)
		}
	}
}

// TestEstimatesDump prints the estimates of -est-sql over the tables of
// -est-data (a debugging aid; skipped without them).
func TestEstimatesDump(t *testing.T) {
	if *estSQL == "" || *estData == "" {
		t.Skip("no -est-sql and -est-data")
	}
	p, err := planner.Plan(context.Background(), *estSQL, loadFooterCatalog(t, *estData), planner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", p.Estimates)
}
