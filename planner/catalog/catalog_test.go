package catalog

import (
	"context"
	"errors"
	"io"
	"net"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/sluicedb/sluice/function/redisdb"
	"github.com/sluicedb/sluice/planner"
	"github.com/sluicedb/sluice/planner/catalog/layout"
	"github.com/sluicedb/sluice/planner/plan"
)

func testTable() *Table {
	return &Table{
		Name: "t", Format: "parquet", Location: "tables/t/",
		Columns: []plan.Field{{Name: "a", Type: plan.Int64Type}},
		Files:   []layout.File{{Key: "tables/t/a.parquet", Size: 10, RowGroups: []layout.RowGroup{{Rows: 3, Bytes: 9}}}},
		Rows:    3, Bytes: 10,
	}
}

func TestStoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	mr := miniredis.RunT(t)
	s := NewStore(redis.NewClient(&redis.Options{Addr: mr.Addr()}))
	if err := s.Put(ctx, testTable()); err != nil {
		t.Fatal(err)
	}
	if !mr.Exists(redisdb.CatalogKey) {
		t.Fatalf("catalog key %s not written", redisdb.CatalogKey)
	}
	lay, err := s.Layout(ctx, "T")
	if err != nil {
		t.Fatal(err)
	}
	want := &layout.Table{Format: "parquet", Files: testTable().Files}
	if !reflect.DeepEqual(lay, want) {
		t.Errorf("Layout = %+v, want %+v", lay, want)
	}
	info, err := s.Table(ctx, "t")
	if err != nil || info.Rows != 3 || info.Bytes != 10 || len(info.Columns) != 1 {
		t.Errorf("Table = %+v, %v", info, err)
	}
	// One ErrUnknownTable, whichever door the lookup came through.
	for name, f := range map[string]func() error{
		"Get":    func() error { _, err := s.Get(ctx, "nope"); return err },
		"Table":  func() error { _, err := s.Table(ctx, "nope"); return err },
		"Layout": func() error { _, err := s.Layout(ctx, "nope"); return err },
	} {
		if err := f(); !errors.Is(err, planner.ErrUnknownTable) {
			t.Errorf("%s(unknown) = %v, want planner.ErrUnknownTable", name, err)
		}
	}
	if err := s.Drop(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if l, err := s.List(ctx); err != nil || len(l) != 0 {
		t.Errorf("List after Drop = %v, %v", l, err)
	}
}

// TestStoreRidesOutOutage: the catalog waits for a Redis that comes back
// within the outage bound, and fails with redisdb.ErrUnavailable when it
// does not (as the job store does).
func TestStoreRidesOutOutage(t *testing.T) {
	ctx := context.Background()
	mr := miniredis.RunT(t)
	// The outage is a forwarder in front of miniredis going away and
	// coming back on the same address. (miniredis.Restart listens before
	// it registers its commands: a client that reconnects in between is
	// answered "unknown command", which no real Redis says.)
	fw := startForwarder(t, mr.Addr())
	rdb := redis.NewClient(&redis.Options{Addr: fw.addr, MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	s := NewStore(rdb)
	if err := s.Put(ctx, testTable()); err != nil {
		t.Fatal(err)
	}
	fw.down()
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(300 * time.Millisecond)
		if err := fw.up(); err != nil {
			t.Error(err)
		}
	}()
	got, err := s.Get(ctx, "t")
	<-done
	if err != nil {
		t.Fatalf("Get across a short outage: %v", err)
	}
	if got.Rows != 3 {
		t.Errorf("Get = %+v", got)
	}

	fw.down()
	s.Retry.Outage = 200 * time.Millisecond
	_, err = s.List(ctx)
	if !errors.Is(err, redisdb.ErrUnavailable) {
		t.Fatalf("List with Redis down past the bound = %v, want redisdb.ErrUnavailable", err)
	}
	if errors.Is(err, planner.ErrUnknownTable) {
		t.Errorf("an outage must not read as an unknown table: %v", err)
	}
}

// forwarder relays TCP connections from its own address to target; down
// closes its listener and every relayed connection, up listens again on
// the same address.
type forwarder struct {
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func startForwarder(t *testing.T, target string) *forwarder {
	f := &forwarder{addr: "127.0.0.1:0", target: target}
	if err := f.up(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.down)
	return f
}

func (f *forwarder) up() error {
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.ln, f.addr = ln, ln.Addr().String()
	f.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r, err := net.Dial("tcp", f.target)
			if err != nil {
				c.Close()
				continue
			}
			f.mu.Lock()
			f.conns = append(f.conns, c, r)
			f.mu.Unlock()
			go func() { _, _ = io.Copy(r, c); r.Close() }()
			go func() { _, _ = io.Copy(c, r); c.Close() }()
		}
	}()
	return nil
}

func (f *forwarder) down() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ln != nil {
		f.ln.Close()
		f.ln = nil
	}
	for _, c := range f.conns {
		c.Close()
	}
	f.conns = nil
}
