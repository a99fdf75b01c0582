package coordinator

import (
	"embed"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The job state machine. Job, stage and task records live in Redis; every
// change of a state is one named transition: a Lua script under lua/ that
// checks its precondition (and, for a fenced one, the caller's fencing
// token) and one Store method in front of it. See docs/architecture.md,
// "Redis".
//
//	job:   none -> running | queued (job_create; queued under admission control)
//	       queued -> running (job_admit, once the admission script let it in)
//	       running | queued -> succeeded | failed | cancelled   (job_finish)
//	stage: pending -> running (stage_start) -> done (stage_finish)
//	                                        -> failed (stage_fail)
//	       pending | running -> skipped (stage_skip)
//	       running -> cancelled | failed (job_finish, for stages still running)
//	task:  pending | running | retrying | failed | input_lost | waiting -> running (task_begin)
//	       -> retrying | failed | input_lost | waiting (task_fail)
//	       -> done (task_commit; first commit wins)
//	       done -> pending (task_reopen)

// JobState is the state of a job.
type JobState string

// Job states.
const (
	StateRunning JobState = "running"
	// StateQueued: admission control (Config.MaxJobs) holds the job until
	// a running one finishes; no stage of it has started.
	StateQueued    JobState = "queued"
	StateSucceeded JobState = "succeeded"
	StateFailed    JobState = "failed"
	StateCancelled JobState = "cancelled"
)

// Terminal reports whether a job state is final.
func (s JobState) Terminal() bool {
	return s == StateSucceeded || s == StateFailed || s == StateCancelled
}

// Terminal reports whether a job state (a JobState or a string read from
// Redis) is final.
func Terminal[S ~string](state S) bool { return JobState(state).Terminal() }

// StageState is the state of a stage.
type StageState string

// Stage states. A stage without a record is pending.
const (
	StagePending   StageState = "pending"
	StageRunning   StageState = "running"
	StageDone      StageState = "done"
	StageSkipped   StageState = "skipped"   // the re-planner found it useless
	StageFailed    StageState = "failed"    // a task failed for good
	StageCancelled StageState = "cancelled" // running when its job finished otherwise
)

// TaskState is the state of a task.
type TaskState string

// Task states. A task without a record is pending.
const (
	TaskPending   TaskState = "pending"
	TaskRunning   TaskState = "running"    // an attempt is open
	TaskRetrying  TaskState = "retrying"   // the last attempt failed; another one comes
	TaskFailed    TaskState = "failed"     // failed for good: its job fails
	TaskInputLost TaskState = "input_lost" // an input was lost; its producer runs again
	TaskWaiting   TaskState = "waiting"    // failed in an infrastructure outage; retried within the outage budget, not counted
	TaskDone      TaskState = "done"       // an attempt committed
)

// ErrRefused is matched (errors.Is) by every *TransitionError.
var ErrRefused = errors.New("transition refused")

// TransitionError is a transition whose precondition did not hold.
type TransitionError struct {
	Transition string // the script's name, e.g. "stage_finish"
	What       string // what was checked: "job", "stage", "attempt", ...
	State      string // the state found ("none" when there is no record)
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("%s refused: %s is %s", e.Transition, e.What, e.State)
}

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *TransitionError) Unwrap() error { return ErrRefused }

//go:embed lua/*.lua
var luaFS embed.FS

// transition is one named Lua script.
type transition struct {
	name   string
	script *redis.Script
}

func newTransition(name string, fenced bool) transition {
	body, err := luaFS.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(err) // embedded: cannot happen
	}
	src := string(body)
	if fenced {
		prelude, err := luaFS.ReadFile("lua/prelude.lua")
		if err != nil {
			panic(err)
		}
		src = string(prelude) + src
	}
	return transition{name: name, script: redis.NewScript(src)}
}

// The transitions. Fenced ones take KEYS fence, job first and ARGV fence
// first (lua/prelude.lua).
var (
	trJobCreate    = newTransition("job_create", false)
	trLeaseAcquire = newTransition("lease_acquire", false)
	trLeaseRelease = newTransition("lease_release", false)
	trJobCollected = newTransition("job_collected", false)
	trJobUpdate    = newTransition("job_update", true)
	trJobFinish    = newTransition("job_finish", true)
	trJobAdmit     = newTransition("job_admit", true)
	// admission is no transition of a record: it moves a job from the
	// admission queue to the admitted set when there is room
	// (lua/admission.lua).
	trAdmission   = newTransition("admission", false)
	trStageStart  = newTransition("stage_start", true)
	trStageUpdate = newTransition("stage_update", true)
	trStageFinish = newTransition("stage_finish", true)
	trStageSkip   = newTransition("stage_skip", true)
	trStageFail   = newTransition("stage_fail", true)
	trTaskBegin   = newTransition("task_begin", true)
	trTaskCommit  = newTransition("task_commit", true)
	trTaskFail    = newTransition("task_fail", true)
	trTaskReopen  = newTransition("task_reopen", true)
	trRoundAdd    = newTransition("round_add", true)
)

// transitionErr turns a script's error reply into ErrStaleFence or a
// *TransitionError.
func transitionErr(name string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if strings.Contains(msg, "STALE_FENCE") {
		return ErrStaleFence
	}
	if _, rest, ok := strings.Cut(msg, "REFUSED "); ok {
		what, state, _ := strings.Cut(rest, " ")
		return &TransitionError{Transition: name, What: what, State: state}
	}
	return err
}

// checkFields refuses field lists that would set a state: states change
// only by transitions.
func checkFields(name string, kv []any) error {
	if len(kv)%2 != 0 {
		return fmt.Errorf("%s: odd field list", name)
	}
	for i := 0; i < len(kv); i += 2 {
		if k, _ := kv[i].(string); k == "state" {
			return &TransitionError{Transition: name, What: "field", State: "state"}
		}
	}
	return nil
}

// MarshalBinary lets go-redis write states as their names.
func (s JobState) MarshalBinary() ([]byte, error)   { return []byte(s), nil }
func (s StageState) MarshalBinary() ([]byte, error) { return []byte(s), nil }
func (s TaskState) MarshalBinary() ([]byte, error)  { return []byte(s), nil }
