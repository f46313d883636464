package offlinekube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// process is one running component. Its standard output and error go to a log file in the work
// directory; exited is closed when it ends, whoever ended it.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	err     error // the exit status; read only after exited is closed
}

// startProcess runs binary with args, its output appended to <logDir>/<name>.log. env adds to
// (and overrides) the test process's environment.
func startProcess(name, binary, logDir string, args, env []string) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("%s: start %s: %w", name, binary, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// running reports whether the process has not exited.
func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop asks the process to end (SIGTERM to its process group) and kills the group when it has not
// ended within grace.
func (p *process) stop(grace time.Duration) {
	if !p.running() {
		return
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.exited
	}
}

// failure is the error for a component that did not come up: its name, what went wrong, and the
// end of its log, which is where the component says why.
func (p *process) failure(what error) error {
	msg := fmt.Sprintf("%s: %v", p.name, what)
	if !p.running() && p.err != nil {
		msg += fmt.Sprintf(" (exited: %v)", p.err)
	}
	return fmt.Errorf("%s; last lines of %s:\n%s", msg, p.logPath, tail(p.logPath, 20))
}

// errExited is the error for a component that ended while the cluster was starting.
var errExited = errors.New("exited while the cluster was starting")

// tail returns the last n lines of the file at path, indented, or why it could not be read.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "    (" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b bytes.Buffer
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("    ")
		b.WriteString(l)
	}
	return b.String()
}

// waitFor polls ready every interval until it returns true, the process exits, or ctx ends. The
// exit is noticed at once, even during a check: a check can hang on something that accepts the
// connection and never answers, such as another program on a port the component could not bind.
// On timeout the error quotes the reason the last check gave.
func waitFor(ctx context.Context, p *process, interval time.Duration, ready func(context.Context) (bool, error)) error {
	type result struct {
		ok  bool
		err error
	}
	var lastErr error
	for {
		checkCtx, cancel := context.WithCancel(ctx)
		results := make(chan result, 1)
		go func() {
			ok, err := ready(checkCtx)
			results <- result{ok, err}
		}()
		var r result
		select {
		case r = <-results:
			cancel()
		case <-p.exited:
			cancel()
			return p.failure(errExited)
		}
		if r.ok {
			return nil
		}
		if r.err != nil {
			lastErr = r.err
		}
		select {
		case <-p.exited:
			return p.failure(errExited)
		case <-ctx.Done():
			why := ctx.Err()
			if lastErr != nil {
				why = fmt.Errorf("%w; last check: %v", why, lastErr)
			}
			return p.failure(fmt.Errorf("not ready: %w", why))
		case <-time.After(interval):
		}
	}
}

// ProcessesMentioning lists the command lines of the running processes that contain s. Every
// component is started with paths in its cluster's work directory, so ProcessesMentioning(workDir)
// is what a test checks to see that a cluster left nothing running.
func ProcessesMentioning(s string) []string {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, path := range cmdlines {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended meanwhile
		}
		if cmd := strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " ")); strings.Contains(cmd, s) {
			found = append(found, cmd)
		}
	}
	return found
}
