// Package objstoretest holds the acceptance test every objstore.Bucket
// implementation must pass, kept apart from objstore (as testing/fstest is
// from io/fs) so that binaries linking objstore do not link testing.
package objstoretest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicedb/sluice/shuffle/objstore"
)

// AcceptanceTest checks that b keeps every guarantee of the Bucket
// interface. It works under a fresh random prefix and deletes it at the
// end, so it can run against a shared bucket. Every Bucket implementation
// runs it in its tests.
func AcceptanceTest(t *testing.T, b objstore.Bucket) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root := "acceptance-" + randomHex(6) + "/"
	defer func() {
		if err := b.DeletePrefix(context.Background(), root); err != nil {
			t.Errorf("cleanup DeletePrefix(%q): %v", root, err)
		}
	}()
	k := func(s string) string { return root + s }
	mustPut := func(t *testing.T, key string, data []byte) {
		t.Helper()
		if err := b.Put(ctx, key, data); err != nil {
			t.Fatalf("Put(%q): %v", key, err)
		}
	}
	mustGet := func(t *testing.T, key string) []byte {
		t.Helper()
		data, err := b.Get(ctx, key)
		if err != nil {
			t.Fatalf("Get(%q): %v", key, err)
		}
		return data
	}

	t.Run("Name", func(t *testing.T) {
		if b.Name() == "" {
			t.Fatal("Name() is empty")
		}
	})

	t.Run("InvalidKeys", func(t *testing.T) {
		bad := []string{"", "/abs", "a/../b", "..", "a//b", "a\x00b", "a\nb", "a\x7fb", "dir/"}
		for _, key := range bad {
			checks := map[string]error{
				"Put":       b.Put(ctx, key, []byte("x")),
				"PutReader": b.PutReader(ctx, key, strings.NewReader("x"), 1),
				"Delete":    b.Delete(ctx, key),
			}
			_, checks["Get"] = b.Get(ctx, key)
			_, checks["GetRange"] = b.GetRange(ctx, key, 0, 1)
			_, checks["Stat"] = b.Stat(ctx, key)
			for name, err := range checks {
				var ke *objstore.KeyError
				if !errors.Is(err, objstore.ErrInvalidKey) || !errors.As(err, &ke) {
					t.Errorf("%s(%q) = %v, want a *objstore.KeyError matching objstore.ErrInvalidKey", name, key, err)
				}
			}
		}
		for _, p := range []string{"/abs", "a/../", "a//", "a\x01"} {
			if _, err := b.List(ctx, p); !errors.Is(err, objstore.ErrInvalidKey) {
				t.Errorf("List(%q) = %v, want objstore.ErrInvalidKey", p, err)
			}
			if err := b.DeletePrefix(ctx, p); !errors.Is(err, objstore.ErrInvalidKey) {
				t.Errorf("DeletePrefix(%q) = %v, want objstore.ErrInvalidKey", p, err)
			}
		}
		if err := b.DeletePrefix(ctx, ""); !errors.Is(err, objstore.ErrInvalidKey) {
			t.Errorf(`DeletePrefix("") = %v, want objstore.ErrInvalidKey`, err)
		}
	})

	t.Run("PutGet", func(t *testing.T) {
		cases := []struct {
			name string
			key  string
			data []byte
		}{
			{"empty", k("pg/empty"), []byte{}},
			{"small", k("pg/small"), []byte("hello, sluice")},
			{"binary", k("pg/binary"), randomBytes(100_000)},
			{"odd key", k("pg/odd key=1+2,é ü_~!'()*.bin"), []byte("odd")},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				mustPut(t, c.key, c.data)
				if got := mustGet(t, c.key); !bytes.Equal(got, c.data) {
					t.Fatalf("Get returned %d bytes, want %d equal bytes", len(got), len(c.data))
				}
				info, err := b.Stat(ctx, c.key)
				if err != nil || info.Size != int64(len(c.data)) || info.Key != c.key {
					t.Fatalf("Stat = %+v, %v; want size %d", info, err, len(c.data))
				}
			})
		}
		t.Run("idempotent and overwrite", func(t *testing.T) {
			key := k("pg/idem")
			mustPut(t, key, []byte("one"))
			mustPut(t, key, []byte("one"))
			if got := mustGet(t, key); string(got) != "one" {
				t.Fatalf("got %q", got)
			}
			mustPut(t, key, []byte("second value"))
			if got := mustGet(t, key); string(got) != "second value" {
				t.Fatalf("after overwrite got %q", got)
			}
			objs, err := b.List(ctx, key)
			if err != nil || len(objs) != 1 {
				t.Fatalf("List after double Put = %v, %v; want one object", objs, err)
			}
		})
		t.Run("caller may reuse buffer", func(t *testing.T) {
			key := k("pg/reuse")
			buf := []byte("original")
			mustPut(t, key, buf)
			copy(buf, "XXXXXXXX")
			if got := mustGet(t, key); string(got) != "original" {
				t.Fatalf("got %q", got)
			}
		})
	})

	t.Run("NotFound", func(t *testing.T) {
		key := k("nf/missing")
		if _, err := b.Get(ctx, key); !errors.Is(err, objstore.ErrNotFound) {
			t.Errorf("Get missing = %v, want objstore.ErrNotFound", err)
		}
		if _, err := b.GetRange(ctx, key, 0, 10); !errors.Is(err, objstore.ErrNotFound) {
			t.Errorf("GetRange missing = %v, want objstore.ErrNotFound", err)
		}
		if _, err := b.Stat(ctx, key); !errors.Is(err, objstore.ErrNotFound) {
			t.Errorf("Stat missing = %v, want objstore.ErrNotFound", err)
		}
		objs, err := b.List(ctx, k("nf/"))
		if err != nil || len(objs) != 0 {
			t.Errorf("List of empty prefix = %v, %v; want empty, nil", objs, err)
		}
	})

	t.Run("PutReader", func(t *testing.T) {
		data := randomBytes(300_000)
		mustPutReader := func(t *testing.T, key string, r io.Reader, size int64) {
			t.Helper()
			if err := b.PutReader(ctx, key, r, size); err != nil {
				t.Fatalf("PutReader(%q, size %d): %v", key, size, err)
			}
			if got := mustGet(t, key); !bytes.Equal(got, data) {
				t.Fatalf("PutReader size %d: Get returned %d bytes, want %d", size, len(got), len(data))
			}
		}
		mustPutReader(t, k("pr/known"), bytes.NewReader(data), int64(len(data)))
		mustPutReader(t, k("pr/unknown"), bytes.NewReader(data), -1)
		// A plain io.Reader (not seekable).
		mustPutReader(t, k("pr/plain"), io.MultiReader(bytes.NewReader(data[:1000]), bytes.NewReader(data[1000:])), int64(len(data)))

		short := k("pr/short")
		if err := b.PutReader(ctx, short, bytes.NewReader(data[:100]), 200); err == nil {
			t.Fatal("PutReader with fewer bytes than size succeeded")
		}
		if _, err := b.Stat(ctx, short); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("short PutReader left an object: Stat = %v", err)
		}
	})

	t.Run("GetRange", func(t *testing.T) {
		key := k("gr/obj")
		data := randomBytes(10_000)
		mustPut(t, key, data)
		size := int64(len(data))
		cases := []struct {
			name   string
			off, n int64
			want   []byte
			err    error
		}{
			{"head", 0, 10, data[:10], nil},
			{"middle", 1234, 1000, data[1234:2234], nil},
			{"to end", 9000, -1, data[9000:], nil},
			{"whole", 0, -1, data, nil},
			{"past end is short", 9990, 100, data[9990:], nil},
			{"last byte", size - 1, 1, data[size-1:], nil},
			{"zero length", 5, 0, []byte{}, nil},
			{"at end", size, 10, []byte{}, nil},
			{"at end to end", size, -1, []byte{}, nil},
			{"beyond end", size + 1, 10, nil, objstore.ErrInvalidRange},
			{"negative offset", -1, 10, nil, objstore.ErrInvalidRange},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got, err := b.GetRange(ctx, key, c.off, c.n)
				if c.err != nil {
					if !errors.Is(err, c.err) {
						t.Fatalf("GetRange(%d, %d) = %v, want %v", c.off, c.n, err, c.err)
					}
					return
				}
				if err != nil {
					t.Fatalf("GetRange(%d, %d): %v", c.off, c.n, err)
				}
				if !bytes.Equal(got, c.want) {
					t.Fatalf("GetRange(%d, %d) returned %d bytes, want %d", c.off, c.n, len(got), len(c.want))
				}
			})
		}
		t.Run("empty object", func(t *testing.T) {
			ek := k("gr/empty")
			mustPut(t, ek, nil)
			got, err := b.GetRange(ctx, ek, 0, 10)
			if err != nil || len(got) != 0 {
				t.Fatalf("GetRange of empty object = %d bytes, %v", len(got), err)
			}
		})
	})

	t.Run("Versions", func(t *testing.T) {
		// A bucket that names versions (ETag) names the same bytes the
		// same way in Stat and List; one that reads by version
		// (MatchGetter) refuses a version that is no longer stored.
		key := k("ver/obj")
		v1, v2 := randomBytes(1000), randomBytes(1000)
		mustPut(t, key, v1)
		st, err := b.Stat(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		ls, err := b.List(ctx, k("ver/"))
		if err != nil || len(ls) != 1 {
			t.Fatalf("List = %v, %v", ls, err)
		}
		if st.ETag != ls[0].ETag {
			t.Fatalf("Stat ETag %q, List ETag %q", st.ETag, ls[0].ETag)
		}
		mg, ok := b.(objstore.MatchGetter)
		if !ok {
			return
		}
		if st.ETag == "" {
			t.Fatal("a MatchGetter's Stat gives no ETag")
		}
		got, err := mg.GetRangeMatch(ctx, key, st.ETag, 10, 20)
		if err != nil || !bytes.Equal(got, v1[10:30]) {
			t.Fatalf("GetRangeMatch of the stored version = %d bytes, %v", len(got), err)
		}
		mustPut(t, key, v2)
		st2, err := b.Stat(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if st2.ETag == st.ETag {
			t.Fatalf("ETag %q unchanged after the object was replaced by other bytes", st.ETag)
		}
		if got, err := mg.GetRangeMatch(ctx, key, st.ETag, 10, 20); !errors.Is(err, objstore.ErrChanged) {
			t.Fatalf("GetRangeMatch of a replaced version = %d bytes, %v; want ErrChanged", len(got), err)
		}
		if objstore.Transient(fmt.Errorf("wrapped: %w", objstore.ErrChanged)) {
			t.Fatal("ErrChanged is not transient: retrying reads the same other version")
		}
		got, err = mg.GetRangeMatch(ctx, key, st2.ETag, 0, -1)
		if err != nil || !bytes.Equal(got, v2) {
			t.Fatalf("GetRangeMatch of the new version = %d bytes, %v", len(got), err)
		}
	})

	t.Run("List", func(t *testing.T) {
		keys := []string{
			k("ls/a"), k("ls/b/1"), k("ls/b/2/x"), k("ls/b/2/y"), k("ls/b10"), k("ls/c.arrow"),
			k("ls/B"), k("ls/b/ä"), k("ls/b-"),
		}
		sizes := map[string]int64{}
		for i, key := range keys {
			data := bytes.Repeat([]byte{'x'}, i*3)
			mustPut(t, key, data)
			sizes[key] = int64(len(data))
		}
		cases := []struct {
			prefix string
			want   []string
		}{
			{k("ls/"), keys},
			{k("ls/b/"), []string{k("ls/b/1"), k("ls/b/2/x"), k("ls/b/2/y"), k("ls/b/ä")}},
			{k("ls/b"), []string{k("ls/b/1"), k("ls/b/2/x"), k("ls/b/2/y"), k("ls/b/ä"), k("ls/b10"), k("ls/b-")}},
			{k("ls/b/2/x"), []string{k("ls/b/2/x")}},
			{k("ls/zzz"), nil},
		}
		for _, c := range cases {
			want := append([]string(nil), c.want...)
			sort.Strings(want)
			got, err := b.List(ctx, c.prefix)
			if err != nil {
				t.Fatalf("List(%q): %v", c.prefix, err)
			}
			var gotKeys []string
			for _, o := range got {
				gotKeys = append(gotKeys, o.Key)
				if o.Size != sizes[o.Key] {
					t.Errorf("List(%q): %s size %d, want %d", c.prefix, o.Key, o.Size, sizes[o.Key])
				}
			}
			if fmt.Sprint(gotKeys) != fmt.Sprint(want) {
				t.Errorf("List(%q) =\n  %q\nwant (sorted, recursive)\n  %q", c.prefix, gotKeys, want)
			}
		}
		// The whole-bucket listing includes our keys.
		all, err := b.List(ctx, "")
		if err != nil {
			t.Fatalf(`List(""): %v`, err)
		}
		if !sort.SliceIsSorted(all, func(i, j int) bool { return all[i].Key < all[j].Key }) {
			t.Error(`List("") is not sorted`)
		}
		found := 0
		for _, o := range all {
			if strings.HasPrefix(o.Key, k("ls/")) {
				found++
			}
		}
		if found != len(keys) {
			t.Errorf(`List("") found %d of our %d keys`, found, len(keys))
		}
	})

	t.Run("ListMany", func(t *testing.T) {
		// More than one page of a typical listing API (1000 keys) is slow
		// on a real store; 1100 small keys written in parallel.
		n := 1100
		keys := make([]string, n)
		for i := range keys {
			keys[i] = k(fmt.Sprintf("many/%05d", i))
		}
		parallel(t, 16, n, func(i int) error { return b.Put(ctx, keys[i], []byte{byte(i)}) })
		got, err := b.List(ctx, k("many/"))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("List returned %d keys, want %d", len(got), n)
		}
		for i, o := range got {
			if o.Key != keys[i] {
				t.Fatalf("List[%d] = %s, want %s", i, o.Key, keys[i])
			}
		}
		if err := b.DeletePrefix(ctx, k("many/")); err != nil {
			t.Fatal(err)
		}
		if got, err := b.List(ctx, k("many/")); err != nil || len(got) != 0 {
			t.Fatalf("after DeletePrefix: %d keys, %v", len(got), err)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		a, c, missing := k("del/a"), k("del/c"), k("del/missing")
		mustPut(t, a, []byte("a"))
		mustPut(t, c, []byte("c"))
		mustPut(t, k("del/keep"), []byte("keep"))
		if err := b.Delete(ctx); err != nil {
			t.Fatalf("Delete() with no keys: %v", err)
		}
		if err := b.Delete(ctx, missing); err != nil {
			t.Fatalf("Delete of a missing key: %v", err)
		}
		if err := b.Delete(ctx, a, missing, c); err != nil {
			t.Fatalf("Delete(a, missing, c): %v", err)
		}
		for _, key := range []string{a, c} {
			if _, err := b.Stat(ctx, key); !errors.Is(err, objstore.ErrNotFound) {
				t.Errorf("Stat(%s) after Delete = %v, want objstore.ErrNotFound", key, err)
			}
		}
		if got := mustGet(t, k("del/keep")); string(got) != "keep" {
			t.Errorf("unrelated key changed: %q", got)
		}
		if err := b.Delete(ctx, a); err != nil {
			t.Errorf("second Delete: %v", err)
		}
	})

	t.Run("DeletePrefix", func(t *testing.T) {
		for _, s := range []string{"dp/x/1", "dp/x/2/3", "dp/x2", "dp/y"} {
			mustPut(t, k(s), []byte(s))
		}
		if err := b.DeletePrefix(ctx, k("dp/x/")); err != nil {
			t.Fatal(err)
		}
		got, err := b.List(ctx, k("dp/"))
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, o := range got {
			keys = append(keys, o.Key)
		}
		if want := []string{k("dp/x2"), k("dp/y")}; fmt.Sprint(keys) != fmt.Sprint(want) {
			t.Fatalf("after DeletePrefix: %q, want %q", keys, want)
		}
		if err := b.DeletePrefix(ctx, k("dp/nothing/")); err != nil {
			t.Fatalf("DeletePrefix of nothing: %v", err)
		}
	})

	t.Run("ReaderAt", func(t *testing.T) {
		key := k("ra/obj")
		data := randomBytes(200_000)
		mustPut(t, key, data)
		size := int64(len(data))
		r := objstore.NewReaderAt(ctx, b, key, size, objstore.WithMinRead(16<<10))
		if r.Size() != size {
			t.Fatalf("Size = %d", r.Size())
		}
		// A footer-style access: last 8 bytes, then the 1000 before them.
		buf := make([]byte, 8)
		if n, err := r.ReadAt(buf, size-8); n != 8 || err != nil || !bytes.Equal(buf, data[size-8:]) {
			t.Fatalf("ReadAt tail: n=%d err=%v", n, err)
		}
		buf = make([]byte, 1000)
		if n, err := r.ReadAt(buf, size-1008); n != 1000 || err != nil || !bytes.Equal(buf, data[size-1008:size-8]) {
			t.Fatalf("ReadAt footer: n=%d err=%v", n, err)
		}
		if r.Requests() != 1 {
			t.Errorf("footer reads made %d requests, want 1 (coalesced)", r.Requests())
		}
		// Many tiny sequential reads are coalesced.
		before := r.Requests()
		for off := int64(0); off < 16<<10; off += 100 {
			p := make([]byte, 100)
			if n, err := r.ReadAt(p, off); n != 100 || err != nil || !bytes.Equal(p, data[off:off+100]) {
				t.Fatalf("ReadAt(%d): n=%d err=%v", off, n, err)
			}
		}
		if got := r.Requests() - before; got > 2 {
			t.Errorf("164 tiny reads made %d requests, want <= 2", got)
		}
		// Random reads, some large, concurrently.
		var wg sync.WaitGroup
		errc := make(chan error, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(seed uint64) {
				defer wg.Done()
				rng := mrand.New(mrand.NewPCG(seed, 1))
				for i := 0; i < 20; i++ {
					off := rng.Int64N(size)
					n := rng.Int64N(40_000) + 1
					p := make([]byte, n)
					got, err := r.ReadAt(p, off)
					want := data[off:min(off+n, size)]
					if got != len(want) || !bytes.Equal(p[:got], want) {
						errc <- fmt.Errorf("ReadAt(%d, len %d) = %d, %v; want %d bytes", off, n, got, err, len(want))
						return
					}
					if int64(got) < n && err != io.EOF {
						errc <- fmt.Errorf("short ReadAt(%d, len %d) err = %v, want io.EOF", off, n, err)
						return
					}
				}
			}(uint64(g))
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Error(err)
		}
		// Past the end.
		if n, err := r.ReadAt(make([]byte, 1), size); n != 0 || err != io.EOF {
			t.Errorf("ReadAt(size) = %d, %v; want 0, EOF", n, err)
		}
		// Seek + Read (io.ReadSeeker) reads the whole object.
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		all, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(all, data) {
			t.Fatalf("ReadAll via Seek/Read: %d bytes, %v", len(all), err)
		}
		if pos, err := r.Seek(-10, io.SeekEnd); err != nil || pos != size-10 {
			t.Fatalf("Seek(-10, End) = %d, %v", pos, err)
		}
		if _, err := r.Seek(-1, io.SeekStart); err == nil {
			t.Error("Seek to a negative position succeeded")
		}
		// Unknown size: Stat on first use.
		r2 := objstore.NewReaderAt(ctx, b, key, -1)
		if r2.Size() != size {
			t.Errorf("Size with stat = %d, want %d", r2.Size(), size)
		}
		r3 := objstore.NewReaderAt(ctx, b, k("ra/missing"), -1)
		if _, err := r3.ReadAt(make([]byte, 1), 0); !errors.Is(err, objstore.ErrNotFound) {
			t.Errorf("ReadAt of a missing object = %v, want objstore.ErrNotFound", err)
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		n := 32
		parallel(t, 8, n, func(i int) error {
			key := k(fmt.Sprintf("conc/%d", i))
			data := bytes.Repeat([]byte{byte(i)}, 1000+i)
			if err := b.Put(ctx, key, data); err != nil {
				return err
			}
			got, err := b.Get(ctx, key)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, data) {
				return fmt.Errorf("%s: read back %d bytes, want %d", key, len(got), len(data))
			}
			return nil
		})
	})

	t.Run("Large", func(t *testing.T) {
		// Large enough for a multipart upload with a small part size.
		key := k("large/obj")
		data := randomBytes(11 << 20)
		mustPut(t, key, data)
		info, err := b.Stat(ctx, key)
		if err != nil || info.Size != int64(len(data)) {
			t.Fatalf("Stat = %+v, %v", info, err)
		}
		if got := mustGet(t, key); !bytes.Equal(got, data) {
			t.Fatal("large object read back differs")
		}
		if err := b.PutReader(ctx, k("large/stream"), io.MultiReader(bytes.NewReader(data)), -1); err != nil {
			t.Fatal(err)
		}
		got, err := b.GetRange(ctx, k("large/stream"), 7<<20, 1<<20)
		if err != nil || !bytes.Equal(got, data[7<<20:8<<20]) {
			t.Fatalf("GetRange of streamed large object: %d bytes, %v", len(got), err)
		}
	})

	t.Run("Upload", func(t *testing.T) {
		// StartUpload: pieces appended while the object is produced (S3
		// sends parts before Commit), stored whole at Commit, never in
		// part.
		data := randomBytes(13<<20 + 12345)
		upload := func(t *testing.T, ctx context.Context, key string, sizes []int) (objstore.Upload, int) {
			t.Helper()
			up, err := objstore.StartUpload(ctx, b, key)
			if err != nil {
				t.Fatalf("StartUpload(%q): %v", key, err)
			}
			off := 0
			for _, n := range sizes {
				// Every piece from a reader of its own, at an offset.
				piece := append(randomBytes(3), data[off:off+n]...)
				if err := up.Append(io.NewSectionReader(bytes.NewReader(piece), 3, int64(n)), int64(n)); err != nil {
					t.Fatalf("Append(%d bytes at %d): %v", n, off, err)
				}
				off += n
			}
			return up, off
		}
		for _, c := range []struct {
			name  string
			sizes []int
		}{
			{"empty", nil},
			{"small pieces", []int{1, 100, 299_899}},
			{"large in pieces", []int{7 << 20, 1000, 3 << 20, 1, 3<<20 + 12345 - 1001}},
			{"large in small pieces", repeat(1<<20, 13)},
		} {
			t.Run(c.name, func(t *testing.T) {
				key := k("upload/" + strings.ReplaceAll(c.name, " ", "-"))
				up, n := upload(t, ctx, key, c.sizes)
				if _, err := b.Stat(ctx, key); !errors.Is(err, objstore.ErrNotFound) {
					t.Fatalf("object visible before Commit: Stat = %v", err)
				}
				size, err := up.Commit(ctx)
				if err != nil {
					t.Fatalf("Commit: %v", err)
				}
				if size != int64(n) {
					t.Fatalf("Commit size %d, want %d", size, n)
				}
				got := mustGet(t, key)
				if !bytes.Equal(got, data[:n]) {
					t.Fatalf("uploaded object differs: %d bytes, want %d", len(got), n)
				}
				if n > 6<<20 {
					r, err := b.GetRange(ctx, key, 5<<20-10, 20)
					if err != nil || !bytes.Equal(r, data[5<<20-10:5<<20+10]) {
						t.Fatalf("GetRange across a part boundary: %v", err)
					}
				}
				up.Abort() // after Commit: a no-op
				if _, err := b.Stat(ctx, key); err != nil {
					t.Fatalf("Abort after Commit removed the object: %v", err)
				}
				if _, err := up.Commit(ctx); err == nil {
					t.Fatal("a second Commit succeeded")
				}
			})
		}
		t.Run("aborted", func(t *testing.T) {
			key := k("upload/aborted")
			up, _ := upload(t, ctx, key, []int{11 << 20})
			up.Abort()
			if _, err := up.Commit(ctx); err == nil {
				t.Fatal("Commit after Abort succeeded")
			}
			if _, err := b.Stat(ctx, key); !errors.Is(err, objstore.ErrNotFound) {
				t.Fatalf("aborted upload left an object: Stat = %v", err)
			}
		})
		t.Run("canceled", func(t *testing.T) {
			for _, n := range []int{1000, 11 << 20} {
				key := k(fmt.Sprintf("upload/canceled-%d", n))
				cctx, ccancel := context.WithCancel(ctx)
				up, _ := upload(t, cctx, key, []int{n})
				ccancel()
				if _, err := up.Commit(cctx); err == nil {
					t.Fatalf("%d bytes: Commit with a canceled context succeeded", n)
				}
				up.Abort()
				if _, err := b.Stat(ctx, key); !errors.Is(err, objstore.ErrNotFound) {
					t.Fatalf("%d bytes: canceled upload left an object: Stat = %v", n, err)
				}
			}
		})
	})

	t.Run("CanceledContext", func(t *testing.T) {
		cctx, ccancel := context.WithCancel(ctx)
		ccancel()
		start := time.Now()
		if err := b.Put(cctx, k("cancel/x"), []byte("x")); err == nil {
			t.Error("Put with a canceled context succeeded")
		}
		if _, err := b.Get(cctx, k("cancel/x")); err == nil {
			t.Error("Get with a canceled context succeeded")
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("canceled operations took %v", time.Since(start))
		}
	})
}

func parallel(t *testing.T, workers, n int, f func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}

func repeat(n, times int) []int {
	out := make([]int, times)
	for i := range out {
		out[i] = n
	}
	return out
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return b
}

func randomHex(n int) string { return hex.EncodeToString(randomBytes(n)) }
