package cloud

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/nas"
)

// scriptedRefresh answers one state per look from states, repeating the last one, and counts the
// looks. A state "!notfound" answers a not-found error instead.
type scriptedRefresh struct {
	states []string
	looks  int
}

func (s *scriptedRefresh) refresh() (string, string, error) {
	s.looks++
	state := s.states[min(s.looks, len(s.states))-1]
	if state == "!notfound" {
		return "", "", notFound(ProductNAS, "DescribeFileSystems", "InvalidFileSystem.NotFound", "file system fs-1")
	}
	return "object in " + state, state, nil
}

// testWaiter is a file system waiter over a script, polling every millisecond.
func testWaiter(s *scriptedRefresh, notFound notFoundMeans) waiter[string] {
	return waiter[string]{
		what: "file system fs-1", refresh: s.refresh, notFound: notFound,
		pending: []string{"Pending", "Extending"}, target: []string{"Running"}, failed: []string{"Stopped"},
		interval: func(int) time.Duration { return time.Millisecond },
	}
}

// longCtx has a deadline far beyond any test: a waiter that returns under it returned for a
// reason of its own.
func longCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	t.Cleanup(cancel)
	return ctx
}

func TestWaitForReachesTarget(t *testing.T) {
	s := &scriptedRefresh{states: []string{"Pending", "Extending", "Running"}}
	got, err := waitFor(longCtx(t), testWaiter(s, notFoundFails))
	if err != nil || got != "object in Running" {
		t.Fatalf("waitFor = %q, %v; want the object in Running", got, err)
	}
	if s.looks != 3 {
		t.Errorf("looked %d times, want 3 (two pending, then the target)", s.looks)
	}
}

// A failed state ends the wait at the look that sees it, not at the deadline (an hour away).
func TestWaitForFailedStateFailsAtOnce(t *testing.T) {
	s := &scriptedRefresh{states: []string{"Pending", "Stopped", "Running"}}
	got, err := waitFor(longCtx(t), testWaiter(s, notFoundFails))
	var se *StateError
	if !errors.As(err, &se) || !se.Failed || se.State != "Stopped" {
		t.Fatalf("waitFor = %q, %v; want a failed-state StateError for Stopped", got, err)
	}
	if s.looks != 2 {
		t.Errorf("looked %d times, want 2: the wait must end at the first look at Stopped", s.looks)
	}
	for _, word := range []string{"file system fs-1", "failed state Stopped", "Running"} {
		if !strings.Contains(err.Error(), word) {
			t.Errorf("error does not name %q: %v", word, err)
		}
	}
	if got != "object in Stopped" {
		t.Errorf("returned %q with the error, want the object as last seen", got)
	}
}

// A state in neither list ends the wait too: the waiter cannot know it will pass.
func TestWaitForUnknownStateFailsAtOnce(t *testing.T) {
	s := &scriptedRefresh{states: []string{"Pending", "Upgrading", "Running"}}
	_, err := waitFor(longCtx(t), testWaiter(s, notFoundFails))
	var se *StateError
	if !errors.As(err, &se) || se.Failed || se.State != "Upgrading" {
		t.Fatalf("waitFor = %v; want an unexpected-state StateError for Upgrading", err)
	}
	if s.looks != 2 {
		t.Errorf("looked %d times, want 2", s.looks)
	}
	for _, word := range []string{"file system fs-1", "unexpected state Upgrading", "Running"} {
		if !strings.Contains(err.Error(), word) {
			t.Errorf("error does not name %q: %v", word, err)
		}
	}
}

// At the deadline the error says what was awaited and what was last seen, and wraps the
// deadline.
func TestWaitForDeadlineNamesLastState(t *testing.T) {
	s := &scriptedRefresh{states: []string{"Pending", "Extending"}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := waitFor(ctx, testWaiter(s, notFoundFails))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waitFor = %v; want the deadline", err)
	}
	want := "waiting for file system fs-1 to be Running (last seen: Extending)"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
	if s.looks < 2 {
		t.Errorf("looked %d times before the deadline, want it to keep looking", s.looks)
	}
}

// Cancelling the context ends the wait's sleep at once (an hour here), with the cancellation as
// the cause.
func TestWaitForHonoursCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &scriptedRefresh{states: []string{"Pending"}}
	w := testWaiter(s, notFoundFails)
	w.refresh = func() (string, string, error) {
		cancel() // during the first look
		return s.refresh()
	}
	w.interval = func(int) time.Duration { return time.Hour }
	_, err := waitFor(ctx, w)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("waitFor = %v; want context.Canceled", err)
	}
	if s.looks != 1 {
		t.Errorf("looked %d times, want 1", s.looks)
	}
}

// A refresh error that is not a not-found ends the wait at once, wrapped, still matching.
func TestWaitForStopsOnRefreshError(t *testing.T) {
	looks := 0
	boom := &APIError{Code: "Forbidden.RAM"}
	w := testWaiter(&scriptedRefresh{}, notFoundPending)
	w.refresh = func() (string, string, error) { looks++; return "", "", boom }
	_, err := waitFor(longCtx(t), w)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "waiting for file system fs-1 to be Running") {
		t.Fatalf("waitFor = %v; want the API error, saying what was awaited", err)
	}
	if looks != 1 {
		t.Errorf("looked %d times, want 1", looks)
	}
}

// What not found means is the waiter's choice, and each choice does what it says.
func TestWaitForNotFound(t *testing.T) {
	t.Run("fails", func(t *testing.T) {
		s := &scriptedRefresh{states: []string{"Pending", "!notfound", "Running"}}
		_, err := waitFor(longCtx(t), testWaiter(s, notFoundFails))
		if !IsNotFound(err) || s.looks != 2 {
			t.Fatalf("waitFor = %v after %d looks; want not found at the second look", err, s.looks)
		}
	})
	t.Run("pending", func(t *testing.T) {
		// Right after a create the object may not be listed yet.
		s := &scriptedRefresh{states: []string{"!notfound", "!notfound", "Pending", "Running"}}
		got, err := waitFor(longCtx(t), testWaiter(s, notFoundPending))
		if err != nil || got != "object in Running" || s.looks != 4 {
			t.Fatalf("waitFor = %q, %v after %d looks; want Running at the fourth", got, err, s.looks)
		}
	})
	t.Run("pending until the deadline says so", func(t *testing.T) {
		s := &scriptedRefresh{states: []string{"!notfound"}}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err := waitFor(ctx, testWaiter(s, notFoundPending))
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "last seen: "+goneState) {
			t.Fatalf("waitFor = %v; want the deadline, naming the object as not found", err)
		}
	})
	t.Run("is the target", func(t *testing.T) {
		s := &scriptedRefresh{states: []string{"Stopped", "Pending", "!notfound"}}
		w := testWaiter(s, notFoundIsTarget)
		w.pending, w.target, w.failed = []string{"Stopped", "Pending"}, nil, nil
		if _, err := waitFor(longCtx(t), w); err != nil || s.looks != 3 {
			t.Fatalf("waitFor = %v after %d looks; want done at the third (not found)", err, s.looks)
		}
	})
}

// The default schedule doubles from pollMin and stops at pollMax, as the waiters always did.
func TestPollInterval(t *testing.T) {
	for attempt, want := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
		if got := pollInterval(attempt); got != want {
			t.Errorf("pollInterval(%d) = %v, want %v", attempt, got, want)
		}
	}
}

// WaitFileSystemRunning ends at the first look at a Stopped file system instead of waiting out
// its deadline. The emulator never stops a file system; the fake API does.
func TestWaitFileSystemRunningFailsAtOnceWhenStopped(t *testing.T) {
	fastWaits(t)
	api := newTestAPI(t, func(w http.ResponseWriter, r *http.Request, action string, hit int) {
		status := "Pending"
		if hit >= 2 {
			status = "Stopped"
		}
		writeJSON(w, &nas.DescribeFileSystemsResponse{RequestId: "req-fs", TotalCount: 1, PageNumber: 1, PageSize: 10,
			FileSystems: nas.FileSystemsInDescribeFileSystems{FileSystem: []nas.FileSystem{{FileSystemId: "fs-1", Status: status}}}})
	})
	fs, err := api.client(t, 0).WaitFileSystemRunning(longCtx(t), "fs-1")
	var se *StateError
	if !errors.As(err, &se) || !se.Failed {
		t.Fatalf("WaitFileSystemRunning = %+v, %v; want a failed-state error", fs, err)
	}
	if !strings.Contains(err.Error(), "file system fs-1 is in the failed state Stopped, not Running") {
		t.Errorf("error does not name the file system, its state and the goal: %v", err)
	}
	if n := api.hitsOf("DescribeFileSystems"); n != 2 {
		t.Errorf("DescribeFileSystems asked %d times, want 2: the wait must end at the first Stopped", n)
	}
}

// DeleteUntilGone waits out refusals, and when ctx ends says what still refused.
func TestDeleteUntilGoneNamesTheLastRefusal(t *testing.T) {
	fastWaits(t)
	calls := 0
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err := DeleteUntilGone(ctx, func() error {
		calls++
		return &APIError{Code: "DependencyViolation.VSwitch", Message: "vSwitch still in use"}
	})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "DependencyViolation.VSwitch") {
		t.Fatalf("DeleteUntilGone = %v; want the deadline naming the refusal", err)
	}
	if calls < 2 {
		t.Errorf("del called %d times, want it retried", calls)
	}
}
