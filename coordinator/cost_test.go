package coordinator

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicedb/sluice/shuffle/objstore"
)

func TestPrices(t *testing.T) {
	c := Cost{S3: objstore.RequestStats{Put: 1000, List: 1000, Get: 10000, Head: 0, Delete: 500}, Invocations: 1e6, GBSeconds: 100}
	c.Price(DefaultPrices())
	// 2,000 PUT-class at $0.005/1k + 10,000 GET at $0.0004/1k; 100 GB-s
	// at $0.0000166667 + 1M requests at $0.20/M.
	if want := 0.01 + 0.004; math.Abs(c.S3Dollars-want) > 1e-12 {
		t.Errorf("S3 $%g, want $%g", c.S3Dollars, want)
	}
	if want := 100*0.0000166667 + 0.20; math.Abs(c.LambdaDollars-want) > 1e-12 || math.Abs(c.Dollars-(c.S3Dollars+want)) > 1e-12 {
		t.Errorf("Lambda $%g total $%g", c.LambdaDollars, c.Dollars)
	}

	p, err := ParsePrices("s3_get_per_1000=0.001, lambda_gb_second=0")
	if err != nil || p.S3GetPer1000 != 0.001 || p.LambdaGBSecond != 0 || p.S3PutPer1000 != 0.005 {
		t.Fatalf("ParsePrices list = %+v, %v", p, err)
	}
	file := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(file, []byte(`{"s3_put_per_1000": 0.0055}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := ParsePrices(file); err != nil || p.S3PutPer1000 != 0.0055 || p.S3GetPer1000 != 0.0004 {
		t.Fatalf("ParsePrices file = %+v, %v", p, err)
	}
	for _, bad := range []string{"s3_gets=1", "s3_get_per_1000=-1", "s3_get_per_1000=x", filepath.Join(t.TempDir(), "none.json")} {
		if _, err := ParsePrices(bad); err == nil {
			t.Errorf("ParsePrices(%q) accepted", bad)
		}
	}
}
