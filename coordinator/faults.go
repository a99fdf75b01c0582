package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicedb/sluice/function"
	"github.com/sluicedb/sluice/shuffle"
	"github.com/sluicedb/sluice/shuffle/objstore"
)

// FaultConfig says how often a FaultInvoker injects each fault: a
// probability per invocation (at most one fault per invocation).
type FaultConfig struct {
	// Crash: the function dies, before doing anything or part way through
	// (some output objects written); the invocation fails.
	Crash float64
	// Hang: the function never answers; the attempt runs into the task
	// deadline (or is overtaken by a hedged duplicate).
	Hang float64
	// Error: the function reports a transient error.
	Error float64
	// Duplicate: the function runs twice for the same attempt (an
	// invocation delivered twice) and reports twice; the first report is
	// returned, the second execution finishes in the background, writing
	// the same objects again.
	Duplicate float64
	// Lose and Corrupt: one of the task's input shuffle objects is deleted
	// or has bytes flipped just before the function runs.
	Lose, Corrupt float64
	// Seed seeds the choice of faults (0: random).
	Seed uint64
}

// Faults lists the fault names ParseFaults knows.
var Faults = []string{"crash", "hang", "error", "duplicate", "lose", "corrupt"}

// ParseFaults parses "crash=0.05,hang=0.01,error=0.05,duplicate=0.05,
// lose=0.02,corrupt=0.02,seed=7" (any subset; empty: no faults).
func ParseFaults(s string) (FaultConfig, error) {
	var fc FaultConfig
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fc, fmt.Errorf("faults: %q is not name=probability", kv)
		}
		if k == "seed" {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return fc, fmt.Errorf("faults: seed %q: %w", v, err)
			}
			fc.Seed = n
			continue
		}
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || p < 0 || p > 1 {
			return fc, fmt.Errorf("faults: %s=%q: want a probability in [0, 1]", k, v)
		}
		switch k {
		case "crash":
			fc.Crash = p
		case "hang":
			fc.Hang = p
		case "error":
			fc.Error = p
		case "duplicate":
			fc.Duplicate = p
		case "lose":
			fc.Lose = p
		case "corrupt":
			fc.Corrupt = p
		default:
			return fc, fmt.Errorf("faults: unknown fault %q (known: %s)", k, strings.Join(Faults, ", "))
		}
	}
	if fc.Crash+fc.Hang+fc.Error+fc.Duplicate+fc.Lose+fc.Corrupt > 1 {
		return fc, errors.New("faults: probabilities add up to more than 1")
	}
	return fc, nil
}

// FaultInvoker wraps an Invoker and injects function faults at the
// configured rates, for fault-injection tests (`sluice coordinator serve
// --faults`, SLUICE_FAULTS). Never use it in production.
type FaultInvoker struct {
	Next   Invoker
	Bucket objstore.Bucket // for lose and corrupt
	Config FaultConfig

	mu       sync.Mutex
	rng      *rand.Rand
	injected sync.Map // fault name -> *atomic.Int64
	bg       sync.WaitGroup
}

// NewFaultInvoker wraps next.
func NewFaultInvoker(next Invoker, bucket objstore.Bucket, cfg FaultConfig) *FaultInvoker {
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	return &FaultInvoker{Next: next, Bucket: bucket, Config: cfg, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Injected returns how many faults of each kind were injected so far.
func (f *FaultInvoker) Injected() map[string]int64 {
	out := map[string]int64{}
	f.injected.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

// String describes the faults injected so far.
func (f *FaultInvoker) String() string {
	m := f.Injected()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

// Wait waits for the background executions of duplicated invocations.
func (f *FaultInvoker) Wait() { f.bg.Wait() }

func (f *FaultInvoker) count(name string) {
	v, _ := f.injected.LoadOrStore(name, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

func (f *FaultInvoker) draw() (fault string, x float64) {
	f.mu.Lock()
	r, x := f.rng.Float64(), f.rng.Float64()
	f.mu.Unlock()
	c := f.Config
	for _, p := range []struct {
		name string
		p    float64
	}{{"crash", c.Crash}, {"hang", c.Hang}, {"error", c.Error}, {"duplicate", c.Duplicate}, {"lose", c.Lose}, {"corrupt", c.Corrupt}} {
		if r < p.p {
			return p.name, x
		}
		r -= p.p
	}
	return "", x
}

// Invoke implements Invoker.
func (f *FaultInvoker) Invoke(ctx context.Context, body []byte) ([]byte, error) {
	fault, x := f.draw()
	// The tasks the invocation carries: one spec, or the members of a
	// pack (a function.Batch). Crashes, hangs and duplicates need none of
	// them; a transient error answers for each, and a lost or corrupted
	// input is one of theirs. Packs are common (every small leaf scan is
	// packed), so faults reach them too.
	var specs []*function.TaskSpec
	if fault != "" {
		var err error
		if specs, err = decodeInvocation(body); err != nil {
			fault = "" // not a body we can read: no fault
		}
	}
	switch fault {
	case "crash":
		f.count(fault)
		if x < 0.5 {
			return nil, errors.New("injected fault: function crashed before starting")
		}
		// Die part way: let it run a little, then kill it.
		cctx, cancel := context.WithTimeout(ctx, time.Duration(x*float64(50*time.Millisecond)))
		defer cancel()
		_, _ = f.Next.Invoke(cctx, body)
		return nil, errors.New("injected fault: function crashed while running")
	case "hang":
		f.count(fault)
		<-ctx.Done()
		return nil, fmt.Errorf("injected fault: function hung: %w", ctx.Err())
	case "error":
		f.count(fault)
		return transientErrorReply(body, specs)
	case "duplicate":
		f.count(fault)
		type reply struct {
			out []byte
			err error
		}
		ch := make(chan reply, 2)
		for i := 0; i < 2; i++ {
			f.bg.Add(1)
			go func() {
				defer f.bg.Done()
				// The second execution outlives the call, as a duplicate
				// delivery would; bounded so tests end.
				dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
				defer cancel()
				out, err := f.Next.Invoke(dctx, body)
				ch <- reply{out, err}
			}()
		}
		select {
		case r := <-ch:
			return r.out, r.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "lose", "corrupt":
		var refs []shuffle.ObjectRef
		for _, spec := range specs {
			for _, in := range spec.Inputs {
				refs = append(refs, in.Objects...)
			}
		}
		if len(refs) > 0 && f.Bucket != nil {
			ref := refs[int(x*float64(len(refs)))%len(refs)]
			if err := f.damage(ctx, fault, ref); err == nil {
				f.count(fault)
			}
		}
	}
	return f.Next.Invoke(ctx, body)
}

// decodeInvocation returns the task specs an invocation body carries: the
// one spec, or each member of a pack.
func decodeInvocation(body []byte) ([]*function.TaskSpec, error) {
	if !function.IsBatch(body) {
		spec, err := function.DecodeSpec(body)
		if err != nil {
			return nil, err
		}
		return []*function.TaskSpec{spec}, nil
	}
	var b function.Batch
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, fmt.Errorf("decode batch: %w", err)
	}
	specs := make([]*function.TaskSpec, 0, len(b.Specs))
	for _, raw := range b.Specs {
		spec, err := function.DecodeSpec(raw)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// transientErrorReply is the reply of a function that failed every task of
// the invocation with a transient error: one TaskResult, or a Batch of
// them in the members' order.
func transientErrorReply(body []byte, specs []*function.TaskSpec) ([]byte, error) {
	results := make([]json.RawMessage, 0, len(specs))
	for _, spec := range specs {
		res, err := json.Marshal(function.TaskResult{Job: spec.Job, Stage: spec.Stage, Task: spec.Task, Attempt: spec.Attempt,
			Fence: spec.Fence, Error: "injected fault: transient function error", Kind: function.ErrTransient})
		if err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	if !function.IsBatch(body) {
		return results[0], nil
	}
	return json.Marshal(&function.Batch{Version: function.SpecVersion, Results: results})
}

// damage deletes or corrupts the object of ref; corruption flips bytes in
// the middle of the part the task reads (its partition's range of a data
// object).
func (f *FaultInvoker) damage(ctx context.Context, fault string, ref shuffle.ObjectRef) error {
	if fault == "lose" {
		return f.Bucket.Delete(ctx, ref.Key)
	}
	data, err := f.Bucket.Get(ctx, ref.Key)
	if err != nil || len(data) == 0 {
		return errors.New("nothing to corrupt")
	}
	lo, hi := 0, len(data)
	if ref.Ranged() && ref.Offset+ref.Bytes <= int64(len(data)) {
		lo, hi = int(ref.Offset), int(ref.Offset+ref.Bytes)
	}
	mid := lo + (hi-lo)/2
	for i := mid; i < hi && i < mid+16; i++ {
		data[i] ^= 0x5a
	}
	return f.Bucket.Put(ctx, ref.Key, data)
}
