// Package shuffle implements sluice's shuffle: the object layout of stage
// outputs, the writer that partitions a task's output rows into one Arrow
// IPC file per task attempt (each output partition a contiguous run of
// record batches in it) plus a manifest, the reader that fetches only the
// partitions a task needs with ranged, merged GETs and checks their
// checksums, stage statistics for the adaptive re-planner (from manifests
// or from a LIST of the stage prefix alone), and inspection helpers for
// `sluice shuffle`.
//
// Layout (prefix is configurable and may be empty; <hh> is the optional
// spread component, see SpreadDigits):
//
//	<prefix>/jobs/<job>/stage-<s>/<hh>/task-<t>/a<attempt>/data.arrow
//	<prefix>/jobs/<job>/stage-<s>/<hh>/task-<t>/a<attempt>/_manifest.json
//
// data.arrow is a plain Arrow IPC file (zstd or lz4 body compression) whose
// record batches are grouped by output partition, in partition order; the
// manifest gives each partition's byte range, rows, bytes and checksum. An
// attempt with no rows writes no data object. The manifest is written last:
// an attempt without one is unfinished and is never read. Older attempts
// (manifest version 1) wrote one part-<p>.arrow file per partition; they are
// still read.
package shuffle

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zeebo/xxh3"
)

// ManifestName is the file name of an attempt's manifest.
const ManifestName = "_manifest.json"

// DataName is the file name of an attempt's data object.
const DataName = "data.arrow"

// MaxSpreadDigits bounds the spread component's hex digits.
const MaxSpreadDigits = 4

// MaxJobIDLen bounds the length of a job id.
const MaxJobIDLen = 128

// ErrInvalidKey is matched by errors of ParseKey and of the validation of
// job ids and attempt prefixes.
var ErrInvalidKey = errors.New("invalid shuffle key")

// ValidateJobID checks a job id: 1 to MaxJobIDLen characters of
// [A-Za-z0-9_-].
func ValidateJobID(job string) error {
	if job == "" || len(job) > MaxJobIDLen {
		return fmt.Errorf("%w: job id %q must have 1 to %d characters", ErrInvalidKey, job, MaxJobIDLen)
	}
	for i := 0; i < len(job); i++ {
		c := job[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("%w: job id %q: only [A-Za-z0-9_-] allowed", ErrInvalidKey, job)
		}
	}
	return nil
}

func cleanPrefix(prefix string) string {
	prefix = strings.Trim(prefix, "/")
	if prefix == "" {
		return ""
	}
	return prefix + "/"
}

// JobPrefix returns "<prefix>/jobs/<job>/" (with a trailing slash, so that a
// LIST of it never matches another job). The key builders do not validate;
// call ValidateJobID when a job id enters the system.
func JobPrefix(prefix, job string) string {
	return cleanPrefix(prefix) + "jobs/" + job + "/"
}

// StagePrefix returns "<prefix>/jobs/<job>/stage-<s>/".
func StagePrefix(prefix, job string, stage int) string {
	return JobPrefix(prefix, job) + "stage-" + strconv.Itoa(stage) + "/"
}

// TaskPrefix returns "<prefix>/jobs/<job>/stage-<s>/task-<t>/".
func TaskPrefix(prefix, job string, stage, task int) string {
	return StagePrefix(prefix, job, stage) + "task-" + strconv.Itoa(task) + "/"
}

// AttemptPrefix returns "<prefix>/jobs/<job>/stage-<s>/task-<t>/a<attempt>/".
func AttemptPrefix(prefix, job string, stage, task, attempt int) string {
	return TaskPrefix(prefix, job, stage, task) + "a" + strconv.Itoa(attempt) + "/"
}

// SpreadDigits is the number of hex digits of the spread component that
// SpreadAttemptPrefix puts between a stage and its tasks (0: none). S3
// scales request rates per key prefix (about 3,500 PUT and 5,500 GET per
// second each); a hash component lets it split one busy stage's keys into
// up to 16^digits prefixes, while a LIST of the job or stage prefix still
// finds every object. The default of the coordinator's --key-spread.
const SpreadDigits = 2

// Spread returns the spread component of a task's keys: the first digits
// hex digits of XXH3 of "<job>/<stage>/<task>" ("" for digits <= 0).
func Spread(job string, stage, task, digits int) string {
	if digits <= 0 {
		return ""
	}
	digits = min(digits, MaxSpreadDigits)
	h := xxh3.HashString(job + "/" + strconv.Itoa(stage) + "/" + strconv.Itoa(task))
	return fmt.Sprintf("%016x", h)[:digits]
}

// SpreadAttemptPrefix is AttemptPrefix with the spread component of
// digits hex digits: "<prefix>/jobs/<job>/stage-<s>/<hh>/task-<t>/a<attempt>/".
func SpreadAttemptPrefix(prefix string, digits int, job string, stage, task, attempt int) string {
	sp := Spread(job, stage, task, digits)
	if sp == "" {
		return AttemptPrefix(prefix, job, stage, task, attempt)
	}
	return StagePrefix(prefix, job, stage) + sp + "/task-" + strconv.Itoa(task) + "/a" + strconv.Itoa(attempt) + "/"
}

// DataKey returns the key of an attempt's data object.
func DataKey(attemptPrefix string) string {
	return withSlash(attemptPrefix) + DataName
}

// PartKey returns the key of output partition part of an attempt.
func PartKey(attemptPrefix string, part int) string {
	return withSlash(attemptPrefix) + "part-" + strconv.Itoa(part) + ".arrow"
}

// ManifestKey returns the key of an attempt's manifest.
func ManifestKey(attemptPrefix string) string {
	return withSlash(attemptPrefix) + ManifestName
}

func withSlash(p string) string {
	if p != "" && !strings.HasSuffix(p, "/") {
		return p + "/"
	}
	return p
}

// KeyInfo is a shuffle key taken apart.
type KeyInfo struct {
	Prefix  string // the layout prefix, without trailing slash ("" if none)
	Job     string
	Spread  string // the spread component ("" if none)
	Stage   int
	Task    int
	Attempt int
	// Part is the output partition of a part-<p>.arrow key (manifest
	// version 1) or of a partition ID "<data key>#<p>" (see ObjectRef.ID);
	// -1 for the manifest and for a bare data key.
	Part     int
	Manifest bool // the key is the attempt's _manifest.json
	Data     bool // the key is the attempt's data.arrow (or a partition of it)
}

// AttemptPrefix returns the attempt prefix of the key.
func (k KeyInfo) AttemptPrefix() string {
	if k.Spread == "" {
		return AttemptPrefix(k.Prefix, k.Job, k.Stage, k.Task, k.Attempt)
	}
	return StagePrefix(k.Prefix, k.Job, k.Stage) + k.Spread + "/task-" + strconv.Itoa(k.Task) + "/a" + strconv.Itoa(k.Attempt) + "/"
}

// ParseKey takes a data, part or manifest key, or a partition ID
// "<data key>#<p>", apart. The layout prefix is whatever precedes
// "jobs/<job>/stage-..." (keys are parsed from the end).
func ParseKey(key string) (KeyInfo, error) {
	bad := func(why string) (KeyInfo, error) {
		return KeyInfo{}, fmt.Errorf("%w: %q: %s", ErrInvalidKey, key, why)
	}
	part := -1
	if i := strings.LastIndexByte(key, '#'); i >= 0 {
		p, ok := parseNum(key[i+1:])
		if !ok || !strings.HasSuffix(key[:i], "/"+DataName) {
			return bad("bad partition ID")
		}
		key, part = key[:i], p
	}
	parts := strings.Split(key, "/")
	if len(parts) < 6 {
		return bad("too few path components")
	}
	n := len(parts)
	info, err := parseAttemptDirs(parts[:n-1])
	if err != nil {
		return bad(err.Error())
	}
	file := parts[n-1]
	switch {
	case file == DataName:
		info.Part, info.Data = part, true
	case part >= 0:
		return bad("a partition ID names a " + DataName + " key")
	case file == ManifestName:
		info.Part, info.Manifest = -1, true
	case strings.HasPrefix(file, "part-") && strings.HasSuffix(file, ".arrow"):
		p, ok := parseNum(strings.TrimSuffix(strings.TrimPrefix(file, "part-"), ".arrow"))
		if !ok {
			return bad("bad partition number")
		}
		info.Part = p
	default:
		return bad("not a " + DataName + ", part-<p>.arrow or " + ManifestName + " file")
	}
	return info, nil
}

// ParseAttemptPrefix takes an attempt prefix (as AttemptPrefix builds it,
// trailing slash optional) apart; Part is -1.
func ParseAttemptPrefix(attemptPrefix string) (KeyInfo, error) {
	p := strings.TrimSuffix(attemptPrefix, "/")
	info, err := parseAttemptDirs(strings.Split(p, "/"))
	if err != nil {
		return KeyInfo{}, fmt.Errorf("%w: attempt prefix %q: %s", ErrInvalidKey, attemptPrefix, err)
	}
	info.Part = -1
	return info, nil
}

// parseAttemptDirs parses [prefix..., jobs, <job>, stage-<s>, [<hh>,]
// task-<t>, a<n>].
func parseAttemptDirs(parts []string) (KeyInfo, error) {
	n := len(parts)
	if n < 5 {
		return KeyInfo{}, errors.New("too few path components")
	}
	spread := ""
	if n >= 6 && isSpread(parts[n-3]) {
		spread = parts[n-3]
		parts = append(parts[:n-3:n-3], parts[n-2:]...)
		n--
	}
	info, err := parseAttempt(parts[n-5:])
	if err != nil {
		return KeyInfo{}, err
	}
	info.Prefix = strings.Join(parts[:n-5], "/")
	info.Spread = spread
	return info, nil
}

func isSpread(s string) bool {
	if s == "" || len(s) > MaxSpreadDigits {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// parseAttempt parses [jobs, <job>, stage-<s>, task-<t>, a<n>].
func parseAttempt(p []string) (KeyInfo, error) {
	var info KeyInfo
	if p[0] != "jobs" {
		return info, errors.New(`missing "jobs/" component`)
	}
	if err := ValidateJobID(p[1]); err != nil {
		return info, err
	}
	info.Job = p[1]
	var ok bool
	if info.Stage, ok = parseNum(strings.TrimPrefix(p[2], "stage-")); !ok || !strings.HasPrefix(p[2], "stage-") {
		return info, errors.New("bad stage-<s> component")
	}
	if info.Task, ok = parseNum(strings.TrimPrefix(p[3], "task-")); !ok || !strings.HasPrefix(p[3], "task-") {
		return info, errors.New("bad task-<t> component")
	}
	if info.Attempt, ok = parseNum(strings.TrimPrefix(p[4], "a")); !ok || !strings.HasPrefix(p[4], "a") {
		return info, errors.New("bad a<attempt> component")
	}
	return info, nil
}

// parseNum parses a canonical non-negative decimal (no sign, no leading
// zeros) that fits an int32.
func parseNum(s string) (int, bool) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	if n > 1<<31-1 {
		return 0, false
	}
	return n, true
}
