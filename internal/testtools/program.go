package testtools

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Program is a command a test runs the way a script does: started, its one ready line on standard
// output awaited, then stopped by a signal. Its standard error is kept for failure messages.
type Program struct {
	cmd     *exec.Cmd
	stderr  lockedBuffer
	done    chan struct{} // closed when the program has exited
	exitErr error         // cmd.Wait's result; read only after done is closed
}

// StartProgram starts cmd and returns the first line it prints on standard output. The test
// fails, quoting the program's standard error, when the program exits first or prints nothing
// within timeout. A program still running when the test ends is killed.
func StartProgram(t testing.TB, cmd *exec.Cmd, timeout time.Duration) (*Program, string) {
	t.Helper()
	p := &Program{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	lines := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			lines <- s.Text()
		}
		close(lines)
		for s.Scan() { // the rest is not the test's business, but a full pipe would block the program
		}
		p.exitErr = cmd.Wait() // after the last read: Wait closes the pipe
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case line, ok := <-lines:
		if !ok {
			<-p.done
			t.Fatalf("%s exited without a ready line (%v); standard error:\n%s", cmd.Path, p.exitErr, p.Stderr())
		}
		return p, line
	case <-time.After(timeout):
		t.Fatalf("%s printed no ready line within %s; standard error:\n%s", cmd.Path, timeout, p.Stderr())
	}
	return nil, ""
}

// Stop sends sig and fails the test unless the program exits cleanly (status 0) within timeout.
func (p *Program) Stop(t testing.TB, sig os.Signal, timeout time.Duration) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signalling %s: %v", p.cmd.Path, err)
	}
	select {
	case <-p.done:
		if p.exitErr != nil {
			t.Fatalf("%s did not exit cleanly on %v: %v; standard error:\n%s", p.cmd.Path, sig, p.exitErr, p.Stderr())
		}
	case <-time.After(timeout):
		t.Fatalf("%s still running %s after %v; standard error:\n%s", p.cmd.Path, timeout, sig, p.Stderr())
	}
}

// Stderr is what the program has written to standard error so far.
func (p *Program) Stderr() string { return p.stderr.String() }

// lockedBuffer is a bytes.Buffer that the program's output copier writes while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(data []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(data)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
