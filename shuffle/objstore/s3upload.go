package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	minio "github.com/minio/minio-go/v7"
)

const (
	// minPartSize is S3's smallest part (all but the last).
	minPartSize = 5 << 20
	// DefaultStreamPartSize is the part size of a streamed upload (see
	// S3Config.StreamPartSize): small, so that the first part leaves
	// early and sending overlaps producing.
	DefaultStreamPartSize = 8 << 20
	// maxParts is S3's limit of parts per upload; past a tenth of it the
	// part size doubles, so an upload never runs out of parts.
	maxParts = 10000
	// streamConcurrency is the parts of one upload sent at once.
	streamConcurrency = 2
)

var _ Streamer = (*S3)(nil)

// NewUpload implements Streamer. Bytes are sent as soon as a part's worth
// (S3Config.StreamPartSize) is appended, in a multipart upload, at most
// two parts at once; an upload that never reaches a part's worth is sent
// at Commit as one PUT, with nothing more than Put costs. Parts are not
// signed unless S3Config.SignPayload asks for it (the shuffle checks its
// own checksums on read). An upload that fails or is aborted is aborted
// on the store too (best effort: a store that misses it keeps the parts
// until its own clean-up of stale uploads, never an object).
func (s *S3) NewUpload(ctx context.Context, key string) (Upload, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	ps := s.streamPartSize
	if ps <= 0 {
		ps = DefaultStreamPartSize
	}
	pctx, cancel := context.WithCancel(ctx)
	return &s3Upload{s: s, key: key, parent: ctx, ctx: pctx, cancel: cancel, partSize: max(ps, minPartSize),
		slots: make(chan struct{}, streamConcurrency)}, nil
}

// s3Upload is a streamed upload to S3.
type s3Upload struct {
	s        *S3
	key      string
	parent   context.Context
	ctx      context.Context // the parts' (canceled by a failure or Abort)
	cancel   context.CancelFunc
	partSize int64
	pending  Segments // appended, not sent yet
	total    int64    // bytes appended
	id       string   // multipart upload ID; "" until the first part
	slots    chan struct{}
	wg       sync.WaitGroup
	done     bool

	mu    sync.Mutex
	etags []string // per part number - 1: one per part started
	err   error    // the first part's failure
}

func (u *s3Upload) failed() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

// Append implements Upload.
func (u *s3Upload) Append(r io.ReaderAt, n int64) error {
	if u.done {
		return errors.New("objstore: upload: Append after Commit or Abort")
	}
	if err := u.failed(); err != nil {
		return err
	}
	u.pending.Add(r, n)
	u.total += n
	for u.pending.Size() >= u.partSize {
		if err := u.send(u.pending.Cut(u.partSize)); err != nil {
			return err
		}
	}
	return nil
}

// send starts sending body as the next part.
func (u *s3Upload) send(body *Segments) error {
	if u.id == "" {
		err := u.s.do(u.ctx, "PUT", u.key, func(ctx context.Context) error {
			id, err := u.s.core.NewMultipartUpload(ctx, u.s.bucket, u.key, minio.PutObjectOptions{ContentType: "application/octet-stream"})
			u.id = id
			return err
		})
		if err != nil {
			return err
		}
	}
	u.mu.Lock()
	u.etags = append(u.etags, "")
	num := len(u.etags)
	u.mu.Unlock()
	if num%(maxParts/10) == 0 {
		u.partSize *= 2
	}
	select {
	case u.slots <- struct{}{}:
	case <-u.ctx.Done():
		if err := u.failed(); err != nil {
			return err
		}
		return u.ctx.Err()
	}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		defer func() { <-u.slots }()
		etag, err := u.s.putPart(u.ctx, u.key, u.id, num, body)
		u.mu.Lock()
		defer u.mu.Unlock()
		if err != nil {
			if u.err == nil {
				u.err = err
				u.cancel()
			}
			return
		}
		u.etags[num-1] = etag
	}()
	return nil
}

// putPart sends one part (retried: the body is read again from its start).
func (s *S3) putPart(ctx context.Context, key, id string, num int, body *Segments) (string, error) {
	var etag string
	err := s.do(ctx, "PUT", key, func(ctx context.Context) error {
		r := body.Reader()
		p, err := s.core.PutObjectPart(ctx, s.bucket, key, id, num, r, r.Size(),
			minio.PutObjectPartOptions{DisableContentSha256: !s.signBody})
		if err != nil {
			return err
		}
		if p.Size != r.Size() {
			return errNoRetry{fmt.Errorf("short upload of part %d: %d of %d bytes", num, p.Size, r.Size())}
		}
		etag = p.ETag
		return nil
	})
	return etag, err
}

// Commit implements Upload.
func (u *s3Upload) Commit(ctx context.Context) (int64, error) {
	if u.done {
		return 0, errors.New("objstore: upload: Commit after Commit or Abort")
	}
	u.done = true
	if u.id == "" {
		defer u.cancel()
		body := u.pending.Reader()
		if err := u.s.PutReader(ctx, u.key, body, body.Size()); err != nil {
			return 0, err
		}
		return body.Size(), nil
	}
	if u.pending.Size() > 0 {
		if err := u.send(u.pending.Cut(u.pending.Size())); err != nil {
			u.abort()
			return 0, err
		}
	}
	u.wg.Wait()
	if err := u.failed(); err != nil {
		u.abort()
		return 0, err
	}
	parts := make([]minio.CompletePart, len(u.etags))
	for i, e := range u.etags {
		parts[i] = minio.CompletePart{PartNumber: i + 1, ETag: e}
	}
	err := u.s.do(ctx, "PUT", u.key, func(ctx context.Context) error {
		_, err := u.s.core.CompleteMultipartUpload(ctx, u.s.bucket, u.key, u.id, parts, minio.PutObjectOptions{})
		return err
	})
	if err != nil {
		u.abort()
		return 0, err
	}
	u.id = "" // complete: nothing to abort
	u.cancel()
	return u.total, nil
}

// Abort implements Upload.
func (u *s3Upload) Abort() {
	if u.done && u.id == "" {
		return
	}
	u.done = true
	u.abort()
}

func (u *s3Upload) abort() {
	u.cancel()
	u.wg.Wait()
	if u.id == "" {
		return
	}
	id := u.id
	u.id = ""
	ctx, cancel := context.WithTimeout(context.WithoutCancel(u.parent), 10*time.Second)
	defer cancel()
	_ = u.s.core.AbortMultipartUpload(ctx, u.s.bucket, u.key, id)
}
