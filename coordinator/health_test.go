package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluicedb/sluice/shuffle/objstore"
)

// unlistable is a bucket whose listings fail, as an unreachable store's do.
type unlistable struct{ objstore.Bucket }

func (unlistable) List(context.Context, string) ([]objstore.ObjectInfo, error) {
	return nil, errors.New("dial tcp 10.0.0.1:9000: connect: connection refused")
}

func TestHealthAndReadiness(t *testing.T) {
	for _, tc := range []struct {
		name       string
		redisDown  bool
		bucketDown bool
		wantReady  int
		wantRedis  string
		wantBucket string
	}{
		{name: "all reachable", wantReady: http.StatusOK, wantRedis: "ok", wantBucket: "ok"},
		{name: "redis down", redisDown: true, wantReady: http.StatusServiceUnavailable, wantRedis: "redis unreachable", wantBucket: "ok"},
		{name: "bucket down", bucketDown: true, wantReady: http.StatusServiceUnavailable, wantRedis: "ok", wantBucket: "bucket mem://test unreachable"},
		{name: "both down", redisDown: true, bucketDown: true, wantReady: http.StatusServiceUnavailable, wantRedis: "redis unreachable", wantBucket: "unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFakeEnv(t, 1)
			var b objstore.Bucket = e.bucket
			if tc.bucketDown {
				b = unlistable{e.bucket}
			}
			c := New(testConfig("c1"), NewStore(e.rdb), b, fakePlanner{twoStageGraph()}, fakeTables{1}, e.inv, nil)
			t.Cleanup(c.Close)
			api := NewAPI(c)
			api.Token = "s3cret"
			srv := httptest.NewServer(api.Handler())
			defer srv.Close()
			if tc.redisDown {
				e.mr.Close()
			}

			// Probes carry no token; /healthz never depends on Redis or the bucket.
			resp, err := http.Get(srv.URL + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("/healthz: %d, want 200", resp.StatusCode)
			}

			resp, err = http.Get(srv.URL + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			var rd Readiness
			err = json.NewDecoder(resp.Body).Decode(&rd)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.wantReady || rd.Ready != (tc.wantReady == http.StatusOK) {
				t.Errorf("/readyz: %d %+v, want %d", resp.StatusCode, rd, tc.wantReady)
			}
			if !strings.Contains(rd.Redis, tc.wantRedis) || !strings.Contains(rd.Bucket, tc.wantBucket) {
				t.Errorf("/readyz body %+v, want redis %q bucket %q", rd, tc.wantRedis, tc.wantBucket)
			}

			// Everything else still wants the token.
			resp, err = http.Get(srv.URL + "/v1/jobs")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("/v1/jobs without token: %d, want 401", resp.StatusCode)
			}
		})
	}
}
