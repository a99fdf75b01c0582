package objstore

import (
	"context"
	"errors"
	"io"
	"sort"
)

// Upload is an object stored from pieces handed over while they are
// produced, so that sending the first bytes overlaps producing the last
// (the shuffle writer encodes partition after partition and appends each
// as it is done). Nothing is visible under the key until Commit returns
// nil; after an error or Abort nothing is, and no partial object is ever
// stored. An Upload is used by one goroutine.
type Upload interface {
	// Append adds the n bytes r holds at offsets [0, n) to the object's
	// end. r must stay readable and unchanged until Commit or Abort
	// returns. An error is the failure of a part already sent; the upload
	// is then over (call Abort).
	Append(r io.ReaderAt, n int64) error
	// Commit stores the object, every byte appended in order, and returns
	// its size.
	Commit(ctx context.Context) (int64, error)
	// Abort discards what was sent. It is safe after Commit (a no-op).
	Abort()
}

// Streamer is a bucket that sends an Upload's bytes while they are
// appended (S3: a multipart upload once a part's worth is there).
type Streamer interface {
	NewUpload(ctx context.Context, key string) (Upload, error)
}

// StartUpload returns an upload of key to b: b's own when it streams
// (Streamer), otherwise one that keeps the appended pieces (without
// copying them) and stores them with one PutReader at Commit. ctx covers
// the parts sent before Commit.
func StartUpload(ctx context.Context, b Bucket, key string) (Upload, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	if s, ok := b.(Streamer); ok {
		return s.NewUpload(ctx, key)
	}
	return &heldUpload{b: b, key: key}, nil
}

// heldUpload is the Upload of a bucket that does not stream.
type heldUpload struct {
	b    Bucket
	key  string
	body Segments
	done bool
}

func (u *heldUpload) Append(r io.ReaderAt, n int64) error {
	if u.done {
		return errors.New("objstore: upload: Append after Commit or Abort")
	}
	u.body.Add(r, n)
	return nil
}

func (u *heldUpload) Commit(ctx context.Context) (int64, error) {
	if u.done {
		return 0, errors.New("objstore: upload: Commit after Commit or Abort")
	}
	u.done = true
	body := u.body.Reader()
	if err := u.b.PutReader(ctx, u.key, body, body.Size()); err != nil {
		return 0, err
	}
	return body.Size(), nil
}

func (u *heldUpload) Abort() { u.done = true }

// Segments is a byte sequence made of pieces of other readers, in order,
// without copying them: an io.ReaderAt over their concatenation.
type Segments struct {
	segs []segment
	size int64
}

type segment struct {
	r     io.ReaderAt
	off   int64 // where the piece starts in r
	start int64 // where it starts in the sequence
	n     int64
}

// Add appends the n bytes r holds at [0, n).
func (s *Segments) Add(r io.ReaderAt, n int64) { s.add(r, 0, n) }

func (s *Segments) add(r io.ReaderAt, off, n int64) {
	if n > 0 {
		s.segs = append(s.segs, segment{r: r, off: off, start: s.size, n: n})
		s.size += n
	}
}

// Size returns the sequence's length.
func (s *Segments) Size() int64 { return s.size }

// ReadAt implements io.ReaderAt.
func (s *Segments) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("objstore: segments: negative offset")
	}
	read := 0
	i := sort.Search(len(s.segs), func(i int) bool { return s.segs[i].start+s.segs[i].n > off })
	for ; len(p) > 0 && i < len(s.segs); i++ {
		seg := s.segs[i]
		in := off - seg.start
		m := int(min(int64(len(p)), seg.n-in))
		k, err := seg.r.ReadAt(p[:m], seg.off+in)
		read += k
		if k < m {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return read, err
		}
		p, off = p[m:], off+int64(m)
	}
	if len(p) > 0 {
		return read, io.EOF
	}
	return read, nil
}

// Cut removes the first n bytes of the sequence (n at most Size) and
// returns them as a sequence of their own.
func (s *Segments) Cut(n int64) *Segments {
	head := &Segments{}
	rest := Segments{}
	for _, seg := range s.segs {
		switch take := min(seg.n, n-head.size); {
		case take <= 0:
			rest.add(seg.r, seg.off, seg.n)
		case take == seg.n:
			head.add(seg.r, seg.off, seg.n)
		default:
			head.add(seg.r, seg.off, take)
			rest.add(seg.r, seg.off+take, seg.n-take)
		}
	}
	*s = rest
	return head
}

// Reader returns a reader of the sequence from its start: an
// io.ReadSeeker, so that a request sending it can be retried.
func (s *Segments) Reader() *io.SectionReader { return io.NewSectionReader(s, 0, s.size) }
