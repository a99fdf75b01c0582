package tests

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// process is a program a test started (launch): the one process launcher
// of the tests. It runs in its own process group, so stopping it stops
// what it started too, and it is waited for in the background (exited is
// closed then).
type process struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// launchOptions say how to run a process.
type launchOptions struct {
	// env is its whole environment (nil: this process's).
	env []string
	// stderr receives its stderr (nil: discarded).
	stderr io.Writer
	// stop is the signal the test's end sends its group (0: SIGKILL);
	// SIGCONT goes first, since a paused process would never see it.
	stop syscall.Signal
	// pdeathsig kills it when the test binary dies before the cleanup.
	pdeathsig bool
	// onExit runs once it exited (closing its log file).
	onExit func()
}

// launch starts bin with args and returns it with its stdout, which the
// caller reads (waitURL, waitLine) or drains. At the test's end the group
// gets o.stop and the process is waited for.
func launch(tb testing.TB, bin string, o launchOptions, args ...string) (*process, io.Reader) {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = o.env
	cmd.Stderr = o.stderr
	if cmd.Stderr == nil {
		cmd.Stderr = io.Discard
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if o.pdeathsig {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		if o.onExit != nil {
			o.onExit()
		}
		close(p.exited)
	}()
	stop := o.stop
	if stop == 0 {
		stop = syscall.SIGKILL
	}
	tb.Cleanup(func() { p.stop(stop) })
	return p, out
}

// signal sends sig to the process group.
func (p *process) signal(sig syscall.Signal) { _ = syscall.Kill(-p.cmd.Process.Pid, sig) }

// stop sends sig to the group (after SIGCONT) unless the process already
// exited, and waits for it to exit.
func (p *process) stop(sig syscall.Signal) {
	select {
	case <-p.exited:
		return
	default:
	}
	p.signal(syscall.SIGCONT)
	p.signal(sig)
	<-p.exited
}

// kill is kill -9 of the process group.
func (p *process) kill() { p.stop(syscall.SIGKILL) }

// waitLine returns the first line of out that contains substr, within
// wait; ok is false when the process exited or wait passed first. The
// rest of out is drained in the background.
func (p *process) waitLine(out io.Reader, substr string, wait time.Duration) (line string, ok bool) {
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), substr) {
				found <- sc.Text()
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case l := <-found:
		return l, true
	case <-p.exited:
		select { // a last line written as it exited
		case l := <-found:
			return l, true
		default:
			return "", false
		}
	case <-time.After(wait):
		return "", false
	}
}

// waitURL returns the first http:// URL the process prints on out
// (waitLine).
func (p *process) waitURL(out io.Reader, wait time.Duration) (string, bool) {
	l, ok := p.waitLine(out, "http://", wait)
	if !ok {
		return "", false
	}
	return strings.Fields(l[strings.Index(l, "http://"):])[0], true
}

// environ is this process's environment plus more.
func environ(more ...string) []string { return append(os.Environ(), more...) }
