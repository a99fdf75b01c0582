package sim

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/sluicedb/sluice/coordinator"
	"github.com/sluicedb/sluice/local/redisserver"
)

// startRedis starts a redis-server for the test (skipped without one,
// outside CI).
func startRedis(t testing.TB) string {
	t.Helper()
	srv, err := redisserver.Start(context.Background())
	if errors.Is(err, redisserver.ErrNotInstalled) && os.Getenv("CI") == "" {
		t.Skip("redis-server not installed")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv.Addr
}

func testOptions(addr string, sf float64) Options {
	cfg := coordinator.DefaultConfig()
	cfg.Concurrency = 256
	cfg.FunctionMemory = 1769 << 20
	return Options{SF: sf, Factor: 20, RedisAddr: addr, Coordinator: cfg,
		Platform: DefaultPlatformConfig(), Store: DefaultStoreConfig()}
}

func TestSimSmoke(t *testing.T) {
	addr := startRedis(t)
	ctx := context.Background()
	s, err := New(ctx, testOptions(addr, 10))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range []Query{{"q06", "select sum(l_extendedprice * l_discount) as revenue from lineitem where l_shipdate >= date '1994-01-01' and l_shipdate < date '1995-01-01' and l_discount between 0.05 and 0.07 and l_quantity < 24"},
		{"q03", "select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, o_orderdate, o_shippriority from customer, orders, lineitem where c_mktsegment = 'BUILDING' and c_custkey = o_custkey and l_orderkey = o_orderkey and o_orderdate < date '1995-03-15' and l_shipdate > date '1995-03-15' group by l_orderkey, o_orderdate, o_shippriority order by revenue desc, o_orderdate limit 10"}} {
		r := s.Run(ctx, q)
		t.Logf("%+v", r)
		if r.State != "succeeded" {
			t.Fatalf("%s: %s %s", q.Name, r.State, r.Error)
		}
	}
}
