package coordinator

import (
	"context"
	"testing"
	"time"

	"github.com/sluicedb/sluice/function"
)

// TestEndings: waiters of a job hear its end, a waiter that leaves
// before it takes nothing with it, and nothing is kept once every waiter
// left or the job ended.
func TestEndings(t *testing.T) {
	var e endings
	a, releaseA := e.wait("j1")
	b, releaseB := e.wait("j1")
	_, releaseC := e.wait("j2")
	releaseC()
	if _, kept := e.waiters["j2"]; kept {
		t.Fatal("a job whose only waiter left is still kept")
	}
	e.ended("j1")
	for _, ch := range []<-chan struct{}{a, b} {
		select {
		case <-ch:
		default:
			t.Fatal("a waiter did not hear the end")
		}
	}
	releaseA()
	releaseB()
	e.ended("j3") // nobody waits: nothing happens
	if len(e.waiters) != 0 {
		t.Fatalf("%d jobs kept, want none", len(e.waiters))
	}
}

// TestEndingsWakesWaiters: the coordinator that finishes a job wakes the
// long-polls waiting for it.
func TestEndingsWakesWaiters(t *testing.T) {
	e := newFakeEnv(t, 2)
	block := make(chan struct{})
	e.inv.behave = func(ctx context.Context, s *function.TaskSpec) (*function.TaskResult, error, bool) {
		<-block
		return nil, nil, false
	}
	c := e.coordinator(t, testConfig("a"))
	job, err := c.Submit(context.Background(), "q", SubmitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ended, release := c.endings.wait(job)
	defer release()
	select {
	case <-ended:
		t.Fatal("woken before the job ended")
	case <-time.After(10 * time.Millisecond):
	}
	close(block)
	waitJob(t, c, job)
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the job ended and its waiter was not woken")
	}
}
