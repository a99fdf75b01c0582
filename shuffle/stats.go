package shuffle

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/sluicedb/sluice/shuffle/objstore"
)

// PartitionStats sums one output partition of a stage over its tasks.
type PartitionStats struct {
	Partition int
	Rows      int64
	Bytes     int64
	// Objects are the partition's part objects, in task order (one per
	// task that wrote rows to it).
	Objects []ObjectRef
}

// StageStats are the output statistics of a stage, from the manifests of
// its committed task attempts, for the adaptive re-planner.
type StageStats struct {
	// Partitions holds the non-empty partitions; an absent partition has
	// no rows.
	Partitions map[int]*PartitionStats
	// NumPartitions is the stage's output partition count (from the
	// manifests; 0 when there are none).
	NumPartitions int
	// Attempts maps each task counted to its attempt.
	Attempts map[int]int
	Rows     int64
	Bytes    int64
}

// Sorted returns the non-empty partitions in partition order.
func (s StageStats) Sorted() []*PartitionStats {
	out := make([]*PartitionStats, 0, len(s.Partitions))
	for _, p := range s.Partitions {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}

// PartitionBytes returns the bytes of every partition 0..NumPartitions-1
// (zero for empty ones).
func (s StageStats) PartitionBytes() []int64 {
	out := make([]int64, s.NumPartitions)
	for p, ps := range s.Partitions {
		if p < len(out) {
			out[p] = ps.Bytes
		}
	}
	return out
}

// PartitionRows returns the rows of every partition 0..NumPartitions-1.
func (s StageStats) PartitionRows() []int64 {
	out := make([]int64, s.NumPartitions)
	for p, ps := range s.Partitions {
		if p < len(out) {
			out[p] = ps.Rows
		}
	}
	return out
}

// Refs returns the objects of the given partitions, partition by
// partition: the input of a consumer task that reads them.
func (s StageStats) Refs(parts ...int) []ObjectRef {
	var out []ObjectRef
	for _, p := range parts {
		if ps := s.Partitions[p]; ps != nil {
			out = append(out, ps.Objects...)
		}
	}
	return out
}

// StatsFromManifests sums the manifests of a stage's committed attempts,
// one per task (if a task has several, the lowest attempt counts).
func StatsFromManifests(ms []*Manifest) StageStats {
	sorted := make([]*Manifest, 0, len(ms))
	for _, m := range ms {
		if m != nil {
			sorted = append(sorted, m)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Task != sorted[j].Task {
			return sorted[i].Task < sorted[j].Task
		}
		return sorted[i].Attempt < sorted[j].Attempt
	})
	st := StageStats{Partitions: map[int]*PartitionStats{}, Attempts: map[int]int{}}
	for _, m := range sorted {
		if _, dup := st.Attempts[m.Task]; dup {
			continue
		}
		st.Attempts[m.Task] = m.Attempt
		st.NumPartitions = max(st.NumPartitions, m.NumPartitions)
		for _, p := range m.Partitions {
			ps := st.Partitions[p.Partition]
			if ps == nil {
				ps = &PartitionStats{Partition: p.Partition}
				st.Partitions[p.Partition] = ps
			}
			ps.Rows += p.Rows
			ps.Bytes += p.Bytes
			ps.Objects = append(ps.Objects, p.Ref())
			st.Rows += p.Rows
			st.Bytes += p.Bytes
		}
	}
	return st
}

// attemptListing is what a LIST shows of one task attempt.
type attemptListing struct {
	prefix       string // the attempt prefix (spread component included)
	manifest     bool
	manifestSize int64
	parts        map[string]int64 // data or part object key -> size
}

// listStage lists a stage prefix and groups the shuffle objects by task
// and attempt. Keys that are not shuffle objects are ignored.
func listStage(ctx context.Context, b objstore.Bucket, prefix, job string, stage int) (map[int]map[int]*attemptListing, error) {
	objs, err := b.List(ctx, StagePrefix(prefix, job, stage))
	if err != nil {
		return nil, fmt.Errorf("shuffle: listing stage %d of job %s: %w", stage, job, err)
	}
	tasks := map[int]map[int]*attemptListing{}
	for _, o := range objs {
		k, err := ParseKey(o.Key)
		if err != nil || k.Job != job || k.Stage != stage {
			continue
		}
		if tasks[k.Task] == nil {
			tasks[k.Task] = map[int]*attemptListing{}
		}
		a := tasks[k.Task][k.Attempt]
		if a == nil {
			a = &attemptListing{prefix: k.AttemptPrefix(), parts: map[string]int64{}}
			tasks[k.Task][k.Attempt] = a
		}
		if k.Manifest {
			a.manifest, a.manifestSize = true, o.Size
		} else {
			a.parts[o.Key] = o.Size
		}
	}
	return tasks, nil
}

// StatsFromListing rebuilds a stage's statistics from a LIST of its prefix
// and the manifests found there, without the coordinator's state. For each
// task it counts the attempt named in committed (task -> attempt), or, when
// committed is nil, the lowest attempt that has a manifest (tasks without
// one are unfinished and skipped). Object sizes in the listing are checked
// against the manifests: a committed attempt without manifest or a listed
// part object that is missing gives a *MissingError, a size that differs or
// a part object the manifest does not name a *CorruptError.
func StatsFromListing(ctx context.Context, b objstore.Bucket, prefix, job string, stage int, committed map[int]int) (StageStats, error) {
	if err := ValidateJobID(job); err != nil {
		return StageStats{}, err
	}
	tasks, err := listStage(ctx, b, prefix, job, stage)
	if err != nil {
		return StageStats{}, err
	}
	type chosen struct {
		task, attempt int
		l             *attemptListing
	}
	var picks []chosen
	if committed != nil {
		for task, attempt := range committed {
			l := tasks[task][attempt]
			if l == nil || !l.manifest {
				key := ManifestKey(AttemptPrefix(prefix, job, stage, task, attempt))
				return StageStats{}, &MissingError{Key: key, Err: fmt.Errorf("committed attempt has no manifest in the listing: %w", objstore.ErrNotFound)}
			}
			picks = append(picks, chosen{task, attempt, l})
		}
	} else {
		for task, attempts := range tasks {
			best := -1
			for a, l := range attempts {
				if l.manifest && (best < 0 || a < best) {
					best = a
				}
			}
			if best >= 0 {
				picks = append(picks, chosen{task, best, attempts[best]})
			}
		}
	}
	sort.Slice(picks, func(i, j int) bool { return picks[i].task < picks[j].task })

	ms := make([]*Manifest, len(picks))
	err = forEach(ctx, len(picks), 8, func(ctx context.Context, i int) error {
		pk := picks[i]
		ap := pk.l.prefix
		m, err := ReadManifest(ctx, b, ap)
		if err != nil {
			return err
		}
		if m.Job != job || m.Stage != stage || m.Task != pk.task || m.Attempt != pk.attempt {
			return &CorruptError{Key: ManifestKey(ap), Reason: fmt.Sprintf(
				"manifest names job %s stage %d task %d attempt %d", m.Job, m.Stage, m.Task, m.Attempt)}
		}
		named := map[string]bool{}
		check := func(key string, want int64) error {
			named[key] = true
			size, ok := pk.l.parts[key]
			switch {
			case !ok:
				return &MissingError{Key: key, Err: fmt.Errorf("named by the manifest but not listed: %w", objstore.ErrNotFound)}
			case size != want:
				return &CorruptError{Key: key, Reason: fmt.Sprintf("listed size %d, manifest says %d", size, want)}
			}
			return nil
		}
		if m.Version >= 2 {
			if m.Object != "" {
				if err := check(m.Object, m.ObjectBytes); err != nil {
					return err
				}
			}
		} else {
			for _, p := range m.Partitions {
				if err := check(p.Key, p.Bytes); err != nil {
					return err
				}
			}
		}
		for key := range pk.l.parts {
			if !named[key] {
				return &CorruptError{Key: key, Reason: "part object not named by its attempt's manifest"}
			}
		}
		ms[i] = m
		return nil
	})
	if err != nil {
		return StageStats{}, err
	}
	return StatsFromManifests(ms), nil
}

// ObjectEntry is one shuffle object of a job, for `sluice shuffle ls`.
type ObjectEntry struct {
	Key      string
	Stage    int
	Task     int
	Attempt  int
	Part     int  // -1 for a manifest and a data object
	Manifest bool // the attempt's _manifest.json
	Data     bool // the attempt's data.arrow
	// Partitions is the number of non-empty partitions a data object
	// holds, from its manifest.
	Partitions int
	Size       int64
	// Rows from the attempt's manifest (for a manifest: the attempt's
	// total); -1 when unknown (no or unreadable manifest).
	Rows int64
	// Note says what is odd about the object, if anything: "no manifest"
	// (unfinished or failed attempt), "not in manifest", "size differs
	// from manifest", or the manifest's read error.
	Note string
}

// ListJob lists a job's shuffle objects, ordered by stage, task, attempt
// and partition (numerically; each attempt's manifest last), with row
// counts from the manifests.
func ListJob(ctx context.Context, b objstore.Bucket, prefix, job string) ([]ObjectEntry, error) {
	if err := ValidateJobID(job); err != nil {
		return nil, err
	}
	objs, err := b.List(ctx, JobPrefix(prefix, job))
	if err != nil {
		return nil, fmt.Errorf("shuffle: listing job %s: %w", job, err)
	}
	var out []ObjectEntry
	manifests := map[string]int{} // attempt prefix -> index in out
	for _, o := range objs {
		k, err := ParseKey(o.Key)
		if err != nil || k.Job != job {
			continue // plans, results and other non-shuffle keys
		}
		e := ObjectEntry{Key: o.Key, Stage: k.Stage, Task: k.Task, Attempt: k.Attempt, Part: k.Part,
			Manifest: k.Manifest, Data: k.Data, Size: o.Size, Rows: -1}
		if k.Manifest {
			manifests[k.AttemptPrefix()] = len(out)
		}
		out = append(out, e)
	}
	type read struct {
		m   *Manifest
		err error
	}
	prefixes := make([]string, 0, len(manifests))
	for p := range manifests {
		prefixes = append(prefixes, p)
	}
	reads := make([]read, len(prefixes))
	err = forEach(ctx, len(prefixes), 8, func(ctx context.Context, i int) error {
		m, err := ReadManifest(ctx, b, prefixes[i])
		reads[i] = read{m, err}
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrMissing) {
			return err // a store failure, not a finding
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	byAttempt := map[string]read{}
	for i, p := range prefixes {
		byAttempt[p] = reads[i]
	}
	for i := range out {
		e := &out[i]
		k, _ := ParseKey(e.Key)
		r, ok := byAttempt[k.AttemptPrefix()]
		switch {
		case !ok:
			e.Note = "no manifest"
		case r.err != nil:
			e.Note = r.err.Error()
		case e.Manifest:
			e.Rows = r.m.Rows
		case e.Data:
			if r.m.Object != e.Key {
				e.Note = "not in manifest"
				break
			}
			e.Rows, e.Partitions = r.m.Rows, len(r.m.Partitions)
			if r.m.ObjectBytes != e.Size {
				e.Note = "size differs from manifest"
			}
		default:
			if ps, found := r.m.Partition(e.Part); found && ps.Key == e.Key {
				e.Rows = ps.Rows
				if ps.Bytes != e.Size {
					e.Note = "size differs from manifest"
				}
			} else {
				e.Note = "not in manifest"
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Stage != b.Stage {
			return a.Stage < b.Stage
		}
		if a.Task != b.Task {
			return a.Task < b.Task
		}
		if a.Attempt != b.Attempt {
			return a.Attempt < b.Attempt
		}
		if a.Manifest != b.Manifest {
			return !a.Manifest
		}
		return a.Part < b.Part
	})
	return out, nil
}
