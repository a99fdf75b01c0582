package coordinator

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// patientBucket is the coordinator's view of the bucket: operations that
// fail because the store is unreachable or overloaded are retried (on top
// of the client's own bounded retries) for up to outage, so that a
// restarting object store delays the coordinator's own writes (plan
// fragments, deletions) instead of failing the job.
type patientBucket struct {
	objstore.Bucket
	outage time.Duration
}

func (b patientBucket) patient(ctx context.Context, f func() error) error {
	var first time.Time
	backoff := 200 * time.Millisecond
	for {
		err := f()
		if err == nil || !objstore.Transient(err) || ctx.Err() != nil {
			return err
		}
		if first.IsZero() {
			first = time.Now()
		}
		if time.Since(first) >= b.outage {
			return fmt.Errorf("object store unavailable for %v: %w", b.outage, err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (b patientBucket) Put(ctx context.Context, key string, data []byte) error {
	return b.patient(ctx, func() error { return b.Bucket.Put(ctx, key, data) })
}

func (b patientBucket) Get(ctx context.Context, key string) (out []byte, err error) {
	err = b.patient(ctx, func() (err error) { out, err = b.Bucket.Get(ctx, key); return err })
	return out, err
}

func (b patientBucket) List(ctx context.Context, prefix string) (out []objstore.ObjectInfo, err error) {
	err = b.patient(ctx, func() (err error) { out, err = b.Bucket.List(ctx, prefix); return err })
	return out, err
}

func (b patientBucket) Delete(ctx context.Context, keys ...string) error {
	return b.patient(ctx, func() error { return b.Bucket.Delete(ctx, keys...) })
}

func (b patientBucket) DeletePrefix(ctx context.Context, prefix string) error {
	return b.patient(ctx, func() error { return b.Bucket.DeletePrefix(ctx, prefix) })
}

// retryTables reads table layouts through the store's patience with an
// unreachable Redis (the catalog lives there too).
type retryTables struct {
	Tables
	s *Store
}

func (t retryTables) Layout(ctx context.Context, table string) (lay *layout.Table, err error) {
	if t.Tables == nil {
		return nil, fmt.Errorf("no table catalog")
	}
	err = t.s.retry(ctx, "read catalog", func() (err error) { lay, err = t.Tables.Layout(ctx, table); return err })
	return lay, err
}

// PlanScan implements ScanPlanner when the wrapped catalog does.
func (t retryTables) PlanScan(ctx context.Context, lay *layout.Table, scan *plan.Scan) (sp *layout.ScanPlan, err error) {
	p, ok := t.Tables.(ScanPlanner)
	if !ok {
		return nil, fmt.Errorf("coordinator: table %s is an Iceberg table and the catalog cannot plan its scans", scan.Table)
	}
	err = t.s.retry(ctx, "plan iceberg scan", func() (err error) { sp, err = p.PlanScan(ctx, lay, scan); return err })
	return sp, err
}

func (b patientBucket) Stat(ctx context.Context, key string) (out objstore.ObjectInfo, err error) {
	err = b.patient(ctx, func() (err error) { out, err = b.Bucket.Stat(ctx, key); return err })
	return out, err
}

func (b patientBucket) GetRange(ctx context.Context, key string, off, n int64) (out []byte, err error) {
	err = b.patient(ctx, func() (err error) { out, err = b.Bucket.GetRange(ctx, key, off, n); return err })
	return out, err
}
