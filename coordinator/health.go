package coordinator

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/sluicedb/sluice/function/redact"
)

// ReadyTimeout bounds each dependency check of GET /readyz, so a probe
// answers within a load balancer's or kubelet's probe timeout even when
// Redis or the object store hangs.
const ReadyTimeout = 2 * time.Second

// readyProbePrefix is the key prefix /readyz lists: nothing is stored
// under it, so the listing is one cheap request that still fails when the
// bucket is missing, unreachable or not readable with the coordinator's
// credentials.
const readyProbePrefix = "readyz-probe/"

// Readiness is the body of GET /readyz: whether this replica can drive
// jobs, and the error of each dependency that is not reachable.
type Readiness struct {
	Ready  bool   `json:"ready"`
	Redis  string `json:"redis"`  // "ok" or the error
	Bucket string `json:"bucket"` // "ok" or the error
}

// Ready checks the coordinator's dependencies: a Redis PING and a listing
// of the bucket, each bounded by ReadyTimeout.
func (c *Coordinator) Ready(ctx context.Context) Readiness {
	r := Readiness{Redis: "ok", Bucket: "ok"}
	rctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	err := c.store.Client().Ping(rctx).Err()
	cancel()
	if err != nil {
		r.Redis = redact.String(fmt.Sprintf("redis unreachable: %v", err))
	}
	bctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	_, err = c.bucket.List(bctx, joinKey(c.cfg.Prefix, readyProbePrefix))
	cancel()
	if err != nil {
		r.Bucket = redact.String(fmt.Sprintf("bucket %s unreachable: %v", c.bucket.Name(), err))
	}
	r.Ready = r.Redis == "ok" && r.Bucket == "ok"
	return r
}

// healthz answers GET /healthz: the process is up and serving HTTP. It
// checks nothing else, so a liveness probe never restarts a replica for
// an outage of Redis or the object store (which /readyz reports).
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// readyz answers GET /readyz: 200 when Redis and the bucket are
// reachable, else 503; the body is a Readiness either way.
func (a *API) readyz(w http.ResponseWriter, r *http.Request) {
	rd := a.c.Ready(r.Context())
	code := http.StatusOK
	if !rd.Ready {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, rd)
}

// unauthenticated reports whether a path is served without the bearer
// token: the probes of load balancers and kubelets carry none.
func unauthenticated(path string) bool { return path == "/healthz" || path == "/readyz" }
