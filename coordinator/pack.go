package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/sluicedb/sluice/function"
)

// Task packing: small task attempts dispatched close together (the leaf
// scans of small tables that all become ready at a job's start, the
// single-task stages a re-plan coalesced down to one partition) share one
// invocation, a function.Batch the function runs concurrently. A
// function invocation costs a fixed start and request price whatever it
// does, so packing tasks that each read a few KiB saves invocations
// without making anything wait for a slot: the packed tasks run side by
// side in the one function, within its memory budget (PackBytes bounds a
// pack's total input).
//
// Every member keeps its own attempt: its own deadline, output prefix,
// commit and retries. A pack that fails as a whole (the invocation did not
// answer) fails each member's attempt, and each is retried on its own.

// A pack closes when every task the driver announced (expect) has
// arrived, or packWindow after its first member joined, or when it is
// full. The tasks of the stages one loop round starts reach the packer
// within milliseconds of each other (each stage first uploads its plan and
// opens its attempts in Redis); a task nobody announced (a retry, a hedge)
// finds no expected company and goes at once. Nor does a pack wait while
// tasks queue for a function slot: the announced tasks still to come are
// then behind the slots the pack's own members hold (with the embedded
// pool's one slot per core, the small leaf scans of a join waited out the
// whole window holding both slots while the scans they unblock queued).
const (
	packWindow = 100 * time.Millisecond
	packTasks  = 16 // most tasks in one pack
)

// packer collects packable attempts into packs and invokes each pack once.
type packer struct {
	inv      Invoker
	maxBytes int64
	base     context.Context // the coordinator's lifetime
	window   time.Duration   // packWindow

	// queued reports whether tasks wait for a function slot (the
	// dispatcher's); nil: never.
	queued func() bool

	mu  sync.Mutex
	cur *pack
	// incoming counts announced tasks that have not arrived yet.
	incoming int
}

// arrival is one announced task: it arrives once, when its first attempt
// is invoked (packed or not) or when it turns out to need no invocation.
type arrival struct {
	p    *packer
	once sync.Once
}

// expect announces n tasks about to be dispatched and returns their
// arrivals.
func (p *packer) expect(n int) []*arrival {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.incoming += n
	out := make([]*arrival, n)
	for i := range out {
		out[i] = &arrival{p: p}
	}
	return out
}

// arrive records that the task will not join a pack (nil-safe; only the
// first call counts).
func (a *arrival) arrive() {
	if a == nil {
		return
	}
	a.p.mu.Lock()
	defer a.p.mu.Unlock()
	a.once.Do(a.p.arrivedLocked)
	if a.p.incoming == 0 && a.p.cur != nil {
		a.p.closeLocked(a.p.cur)
	}
}

func (p *packer) arrivedLocked() {
	if p.incoming > 0 {
		p.incoming--
	}
}

type pack struct {
	members  []*packMember
	bytes    int64
	first    time.Time // when the first member joined
	deadline time.Time
	timer    *time.Timer
	closed   bool
}

type packMember struct {
	ctx  context.Context
	body []byte
	done chan packOutcome // buffered: the sender never blocks
}

type packOutcome struct {
	out []byte
	err error
	// shared: the invocation is counted (and charged) on another member.
	shared bool
}

func newPacker(ctx context.Context, inv Invoker, maxBytes int64) *packer {
	return &packer{inv: inv, maxBytes: maxBytes, base: ctx, window: packWindow}
}

// invoke adds one encoded TaskSpec of bytes input bytes, due by deadline,
// to the open pack (opening one when it is full or there is none) and
// returns the member's encoded TaskResult once the pack was invoked.
// shared reports whether another member of the pack counts the
// invocation.
//
// a is the task's arrival (nil for a task nobody announced).
func (p *packer) invoke(ctx context.Context, body []byte, bytes int64, deadline time.Time, a *arrival) (out []byte, shared bool, err error) {
	m := &packMember{ctx: ctx, body: body, done: make(chan packOutcome, 1)}
	p.mu.Lock()
	if a != nil {
		a.once.Do(p.arrivedLocked)
	}
	if pk := p.cur; pk != nil && (pk.bytes+bytes > p.maxBytes || len(pk.members) >= packTasks) {
		p.closeLocked(pk)
	}
	pk := p.cur
	now := time.Now()
	if pk == nil {
		pk = &pack{first: now}
		p.cur = pk
		pk.timer = time.AfterFunc(p.window, func() { p.close(pk) })
	}
	pk.members = append(pk.members, m)
	pk.bytes += bytes
	if deadline.After(pk.deadline) {
		pk.deadline = deadline
	}
	if p.incoming == 0 || (p.queued != nil && p.queued()) {
		p.closeLocked(pk) // nobody else is on the way, or can get here soon
	}
	p.mu.Unlock()
	select {
	case o := <-m.done:
		return o.out, o.shared, o.err
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// hasOpenPack reports whether a pack is collecting members.
func (p *packer) hasOpenPack() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur != nil
}

// flush sends the open pack, if any (a task started waiting for a slot).
func (p *packer) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur != nil {
		p.closeLocked(p.cur)
	}
}

func (p *packer) close(pk *pack) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeLocked(pk)
}

// closeLocked takes pk out of the packer and invokes it in the background.
func (p *packer) closeLocked(pk *pack) {
	if p.cur == pk {
		p.cur = nil
	}
	if pk.closed {
		return
	}
	pk.closed = true
	pk.timer.Stop()
	go p.send(pk)
}

// send invokes a pack: a lone member as a plain invocation under its own
// context, several as one function.Batch whose context ends at the latest
// member deadline or once every member stopped waiting.
func (p *packer) send(pk *pack) {
	if len(pk.members) == 1 {
		m := pk.members[0]
		out, err := p.inv.Invoke(m.ctx, m.body)
		m.done <- packOutcome{out: out, err: err}
		return
	}
	ctx, cancel := context.WithDeadline(p.base, pk.deadline)
	defer cancel()
	waiting := len(pk.members)
	var mu sync.Mutex
	b := function.Batch{Version: function.SpecVersion}
	for _, m := range pk.members {
		b.Specs = append(b.Specs, m.body)
		stop := context.AfterFunc(m.ctx, func() {
			mu.Lock()
			defer mu.Unlock()
			if waiting--; waiting == 0 {
				cancel() // nobody waits for the pack any more
			}
		})
		defer stop()
	}
	body, err := json.Marshal(&b)
	var out []byte
	if err == nil {
		out, err = p.inv.Invoke(ctx, body)
	}
	var res function.Batch
	if err == nil {
		if err = json.Unmarshal(out, &res); err == nil && len(res.Results) != len(pk.members) {
			err = fmt.Errorf("function answered a batch of %d tasks with %d results (does it understand task batches?)", len(pk.members), len(res.Results))
		}
		if err != nil {
			err = fmt.Errorf("task batch: %w", err)
		}
	}
	for i, m := range pk.members {
		if err != nil {
			m.done <- packOutcome{err: err}
			continue
		}
		m.done <- packOutcome{out: res.Results[i], shared: i > 0}
	}
}
