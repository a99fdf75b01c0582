package coordinator

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// resultSource returns the bucket a result is read from once every one of
// its objects is known to be there and whole (the check before an answer
// is promised). A small result is fetched at once, one ranged GET per
// object from its first byte to the end of its last partition, and read
// from memory: where the check (a HEAD per object) and the read (the
// object's schema, then its partitions) were three requests one after the
// other, it is one. A larger result, or one whose refs do not give their
// sizes, is checked with CheckObjects and read from b. small is
// Config.SmallResultBytes.
func resultSource(ctx context.Context, b objstore.Bucket, refs []shuffle.ObjectRef, small int64) (objstore.Bucket, error) {
	ends := map[string]int64{} // key -> bytes to fetch
	var order []string
	whole := map[string]bool{}
	var total int64
	for _, r := range refs {
		if r.Bytes <= 0 || small < 0 {
			return b, CheckObjects(ctx, b, refs)
		}
		end := r.Offset + r.Bytes
		if !r.Ranged() {
			whole[r.Key] = true
		}
		old, seen := ends[r.Key]
		if !seen {
			order = append(order, r.Key)
		}
		if end > old {
			total += end - old
			ends[r.Key] = end
		}
	}
	if total > small {
		return b, CheckObjects(ctx, b, refs)
	}
	held := objstore.NewMem("result")
	g, gctx := errgroup.WithContext(ctx) // the first error cancels the other fetches
	g.SetLimit(8)
	for _, key := range order {
		g.Go(func() error { return fetchHeld(gctx, b, held, key, ends[key], whole[key]) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return held, nil
}

// fetchHeld copies the first end bytes of key into held, failing as
// CheckObjects does when the object is missing or shorter; a whole
// object (a version-1 partition object) must be exactly end bytes.
func fetchHeld(ctx context.Context, b objstore.Bucket, held objstore.Bucket, key string, end int64, whole bool) error {
	n := end
	if whole {
		n = end + 1 // one more byte shows an object longer than recorded
	}
	body, err := b.GetRange(ctx, key, 0, n)
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		return &shuffle.MissingError{Key: key, Err: err}
	case err != nil:
		return fmt.Errorf("read %s: %w", key, err)
	case whole && int64(len(body)) != end:
		return &shuffle.CorruptError{Key: key, Reason: fmt.Sprintf("size %d, want %d", len(body), end)}
	case int64(len(body)) < end:
		return &shuffle.CorruptError{Key: key, Reason: fmt.Sprintf("size %d, shorter than its partitions' end %d", len(body), end)}
	}
	return held.Put(ctx, key, body)
}
