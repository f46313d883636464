package cloud

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The shared machinery of every waiter (Wait* functions) and of deletes that must outlast
// dependents draining. Each product file builds its waiters from poll and waitGone.

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

// poll calls check until it reports done, fails, or ctx ends.
func poll(ctx context.Context, check func() (bool, error)) error {
	for attempt := 0; ; attempt++ {
		done, err := check()
		if err != nil || done {
			return err
		}
		if err := sleep(ctx, min(pollMin*time.Duration(1<<min(attempt, 4)), pollMax)); err != nil {
			return err
		}
	}
}

// waitGone polls find until it reports not found.
func waitGone(ctx context.Context, what string, find func() error) error {
	err := poll(ctx, func() (bool, error) {
		err := find()
		if IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("waiting for %s to be deleted: %w", what, err)
	}
	return err
}

// DeleteUntilGone calls del until it succeeds or says not found, retrying every
// DependencyViolation variant (dependents still draining) and the given codes (status codes such
// as IncorrectVpcStatus) with backoff until ctx ends. Not found counts as done.
//
// When ctx ends during a call rather than between two, the error still names the last refusal,
// so a destroy that timed out says what it was waiting for.
func DeleteUntilGone(ctx context.Context, del func() error, retryCodes ...string) error {
	var refused error
	for attempt := 0; ; attempt++ {
		err := del()
		if err == nil || IsNotFound(err) {
			return nil
		}
		if !IsDependencyViolation(err) && !IsCode(err, retryCodes...) {
			if refused != nil && ctx.Err() != nil {
				return fmt.Errorf("%w (still refused: %v)", ctx.Err(), refused)
			}
			return err
		}
		refused = err
		if sleepErr := sleep(ctx, backoff(deleteRetryMin, deleteRetryMax, attempt)); sleepErr != nil {
			return fmt.Errorf("%w (still refused: %v)", sleepErr, err)
		}
	}
}
