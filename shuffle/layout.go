// Package shuffle implements sluice's shuffle: the object layout of stage
// outputs, the writer that partitions a task's output rows into Arrow IPC
// files (one per non-empty output partition) plus a manifest, the reader
// that streams committed objects back with size and checksum checks, stage
// statistics for the adaptive re-planner (from manifests or from a LIST of
// the stage prefix alone), and inspection helpers for `sluice shuffle`.
//
// Layout (prefix is configurable and may be empty):
//
//	<prefix>/jobs/<job>/stage-<s>/task-<t>/a<attempt>/part-<p>.arrow
//	<prefix>/jobs/<job>/stage-<s>/task-<t>/a<attempt>/_manifest.json
//
// A part object is a plain Arrow IPC file (zstd or lz4 body compression);
// an empty output partition writes no object. The manifest is written last:
// an attempt without one is unfinished and is never read.
package shuffle

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ManifestName is the file name of an attempt's manifest.
const ManifestName = "_manifest.json"

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
	Prefix   string // the layout prefix, without trailing slash ("" if none)
	Job      string
	Stage    int
	Task     int
	Attempt  int
	Part     int  // output partition; -1 for the manifest
	Manifest bool // the key is the attempt's _manifest.json
}

// AttemptPrefix returns the attempt prefix of the key.
func (k KeyInfo) AttemptPrefix() string {
	return AttemptPrefix(k.Prefix, k.Job, k.Stage, k.Task, k.Attempt)
}

// ParseKey takes a part or manifest key apart. The layout prefix is
// whatever precedes "jobs/<job>/stage-..." (keys are parsed from the end).
func ParseKey(key string) (KeyInfo, error) {
	bad := func(why string) (KeyInfo, error) {
		return KeyInfo{}, fmt.Errorf("%w: %q: %s", ErrInvalidKey, key, why)
	}
	parts := strings.Split(key, "/")
	if len(parts) < 6 {
		return bad("too few path components")
	}
	n := len(parts)
	info, err := parseAttempt(parts[n-6 : n-1])
	if err != nil {
		return bad(err.Error())
	}
	info.Prefix = strings.Join(parts[:n-6], "/")
	file := parts[n-1]
	switch {
	case file == ManifestName:
		info.Part, info.Manifest = -1, true
	case strings.HasPrefix(file, "part-") && strings.HasSuffix(file, ".arrow"):
		p, ok := parseNum(strings.TrimSuffix(strings.TrimPrefix(file, "part-"), ".arrow"))
		if !ok {
			return bad("bad partition number")
		}
		info.Part = p
	default:
		return bad("not a part-<p>.arrow or " + ManifestName + " file")
	}
	return info, nil
}

// ParseAttemptPrefix takes an attempt prefix (as AttemptPrefix builds it,
// trailing slash optional) apart; Part is -1.
func ParseAttemptPrefix(attemptPrefix string) (KeyInfo, error) {
	p := strings.TrimSuffix(attemptPrefix, "/")
	parts := strings.Split(p, "/")
	if len(parts) < 5 {
		return KeyInfo{}, fmt.Errorf("%w: attempt prefix %q: too few path components", ErrInvalidKey, attemptPrefix)
	}
	n := len(parts)
	info, err := parseAttempt(parts[n-5:])
	if err != nil {
		return KeyInfo{}, fmt.Errorf("%w: attempt prefix %q: %s", ErrInvalidKey, attemptPrefix, err)
	}
	info.Prefix = strings.Join(parts[:n-5], "/")
	info.Part = -1
	return info, nil
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
