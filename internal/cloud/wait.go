package cloud

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Every wait in this package is a waiter: a refresh function that reads the object and names its
// state, and the states that mean "keep waiting" (pending), "done" (target) and "it will not get
// there" (failed). waitFor runs it. Writing a new Wait* function is filling in a waiter; a loop
// with its own sleep is not, because every hand-written loop so far forgot something (failing
// fast on a failed state, saying what it last saw when the deadline passed).

// Poll interval bounds of waiters.
var (
	pollMin = 500 * time.Millisecond
	pollMax = 5 * time.Second
)

// Backoff bounds of DeleteUntilGone while dependents drain (instances take seconds to go).
var (
	deleteRetryMin = time.Second
	deleteRetryMax = 10 * time.Second
)

// Poll bounds for instance waiters: quick first looks (instances often boot in seconds), then
// backing off with jitter so a thousand-node wait does not hammer the API.
var (
	instancePollMin = 500 * time.Millisecond
	instancePollMax = 5 * time.Second
)

// notFoundMeans says what a not-found answer (IsNotFound) of the refresh function means to a
// waiter. Which one is right depends on the call the wait follows, so every waiter says so.
type notFoundMeans int

const (
	// notFoundFails: the object must exist; not found ends the wait with that error (callers can
	// still test IsNotFound). For objects the API shows as soon as the create returns.
	notFoundFails notFoundMeans = iota
	// notFoundPending: keep waiting; the API may not show an object created a moment ago
	// (eventual consistency, as DescribeInstances after RunInstances).
	notFoundPending
	// notFoundIsTarget: not found is what the wait is for (a delete).
	notFoundIsTarget
)

// goneState is the state waitFor reports for an object the refresh function did not find.
const goneState = "(not found)"

// waiter is one wait: what it reads, and which states mean what.
type waiter[T any] struct {
	// what names the object in errors: "file system fs-1".
	what string
	// goal is what the wait is for, after "to": "be Running". Empty: "be" and the target states.
	goal string
	// refresh reads the object once and names its state. An error other than a not-found one
	// (see notFound) ends the wait at once: it is the API's answer, not a state.
	refresh func() (T, string, error)
	// pending states mean keep polling; target states end the wait; failed states end it with
	// a StateError at once. A state in none of them ends it too: a wait that does not know a
	// state cannot know that it will pass, and waiting out the deadline would hide it.
	pending, target, failed []string
	notFound                notFoundMeans
	// interval is the sleep before the attempt+1-th look (attempt counts from 0); nil is
	// pollInterval.
	interval func(attempt int) time.Duration
	// lastSeen describes the last object seen for the deadline error; nil uses its state.
	lastSeen func(v T, state string) string
}

// pollInterval is the waiters' default schedule: doubling from pollMin to pollMax, no jitter
// (one object, one caller).
func pollInterval(attempt int) time.Duration {
	return min(pollMin*time.Duration(1<<min(attempt, 4)), pollMax)
}

// StateError is a waiter's answer when the object reached a state it does not come back from by
// itself (Failed set), or a state the waiter does not know.
type StateError struct {
	What   string   // "file system fs-1"
	State  string   // the state seen
	Want   []string // the target states
	Failed bool     // the state is one the vendor documents as failed (or final, such as deleting)
}

func (e *StateError) Error() string {
	kind := "unexpected state"
	if e.Failed {
		kind = "failed state"
	}
	return fmt.Sprintf("%s is in the %s %s, not %s", e.What, kind, e.State, strings.Join(e.Want, " or "))
}

// waitFor polls w.refresh until the object is in a target state and returns it as last seen.
// It fails at once on a failed or unknown state (a *StateError) and on a refresh error; when ctx
// ends it returns ctx's error, saying what it waited for and what it last saw. The value
// returned with an error is the last one seen (the zero value if none was).
func waitFor[T any](ctx context.Context, w waiter[T]) (T, error) {
	interval := w.interval
	if interval == nil {
		interval = pollInterval
	}
	goal := w.goal
	if goal == "" {
		goal = "be " + strings.Join(w.target, " or ")
	}
	var last T
	lastState := ""
	for attempt := 0; ; attempt++ {
		v, state, err := w.refresh()
		switch {
		case err == nil:
			last, lastState = v, state
		case IsNotFound(err) && w.notFound == notFoundIsTarget:
			return last, nil
		case IsNotFound(err) && w.notFound == notFoundPending:
			lastState = goneState
		default:
			return last, fmt.Errorf("waiting for %s to %s: %w", w.what, goal, err)
		}
		if err == nil {
			switch {
			case slices.Contains(w.target, state):
				return v, nil
			case slices.Contains(w.failed, state):
				return v, &StateError{What: w.what, State: state, Want: w.target, Failed: true}
			case !slices.Contains(w.pending, state):
				return v, &StateError{What: w.what, State: state, Want: w.target}
			}
		}
		if err := sleep(ctx, interval(attempt)); err != nil {
			seen := lastState
			if w.lastSeen != nil && lastState != goneState {
				seen = w.lastSeen(last, lastState)
			}
			if seen == "" {
				return last, fmt.Errorf("waiting for %s to %s: %w", w.what, goal, err)
			}
			return last, fmt.Errorf("waiting for %s to %s (last seen: %s): %w", w.what, goal, seen, err)
		}
	}
}

// refreshStatus is the refresh function of a finder whose object carries its state: most
// waiters' refresh.
func refreshStatus[T any](find func() (*T, error), status func(*T) string) func() (*T, string, error) {
	return func() (*T, string, error) {
		v, err := find()
		if err != nil {
			return nil, "", err
		}
		return v, status(v), nil
	}
}

// presentState is the state waitGone gives every object still found, whatever its own status:
// a delete waits for whatever state the object passes through on its way out.
const presentState = "present"

// waitGone polls find until it reports not found.
func waitGone(ctx context.Context, what string, find func() error) error {
	_, err := waitFor(ctx, waiter[struct{}]{
		what: what, goal: "be deleted", notFound: notFoundIsTarget,
		refresh: func() (struct{}, string, error) { return struct{}{}, presentState, find() },
		pending: []string{presentState},
	})
	return err
}

// DeleteUntilGone calls del until it succeeds or says not found, retrying every
// DependencyViolation variant (dependents still draining) and the given codes (status codes such
// as IncorrectVpcStatus) with backoff until ctx ends. Not found counts as done.
//
// When ctx ends during a call rather than between two, the error still names the last refusal,
// so a destroy that timed out says what it was waiting for.
func DeleteUntilGone(ctx context.Context, del func() error, retryCodes ...string) error {
	const refusedState, acceptedState = "refused", "accepted"
	var refused error
	_, err := waitFor(ctx, waiter[struct{}]{
		what: "the delete", goal: "be accepted",
		refresh: func() (struct{}, string, error) {
			err := del()
			switch {
			case err == nil || IsNotFound(err):
				return struct{}{}, acceptedState, nil
			case IsDependencyViolation(err) || IsCode(err, retryCodes...):
				refused = err
				return struct{}{}, refusedState, nil
			case refused != nil && ctx.Err() != nil:
				return struct{}{}, "", fmt.Errorf("%w (still refused: %v)", ctx.Err(), refused)
			}
			return struct{}{}, "", serviceAnswer{err}
		},
		pending:  []string{refusedState},
		target:   []string{acceptedState},
		interval: func(attempt int) time.Duration { return backoff(deleteRetryMin, deleteRetryMax, attempt) },
		lastSeen: func(struct{}, string) string { return fmt.Sprintf("still refused: %v", refused) },
	})
	var final serviceAnswer
	if errors.As(err, &final) {
		return final.err // the service's own answer, as the caller's wrapping expects
	}
	return err
}

// serviceAnswer carries a call's own error (a delete the service refused for good) out through
// waitFor, so the waiter's caller can return it unwrapped, as the service gave it: the callers'
// own wrapping ("deleting VPC vpc-1: ...") already says what was being done.
type serviceAnswer struct{ err error }

func (e serviceAnswer) Error() string { return e.err.Error() }
func (e serviceAnswer) Unwrap() error { return e.err }
