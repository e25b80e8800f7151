package resource

import (
	"errors"
	"fmt"
)

// UserError is a problem a user must fix (bad input, a missing referenced object). It
// leaves Synced=False with Reason and an actionable message, emits one event, and is
// retried slowly rather than in a hot loop.
type UserError struct {
	// Reason is a CamelCase condition reason.
	Reason string
	// Message tells the user what to do.
	Message string
}

// Error returns the message.
func (e *UserError) Error() string { return e.Message }

// UserErrorf builds a UserError.
func UserErrorf(reason, format string, args ...any) error {
	return &UserError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// AsUserError reports whether err is (or wraps) a UserError.
func AsUserError(err error) (*UserError, bool) {
	var u *UserError
	ok := errors.As(err, &u)
	return u, ok
}

// Waiting is not a failure: the reconciler waits for something that is under way.
type Waiting struct {
	// Reason is a CamelCase condition reason.
	Reason string
	// Message says what is awaited.
	Message string
}

// Error returns the message.
func (w *Waiting) Error() string { return w.Message }

// Waitf builds a Waiting.
func Waitf(reason, format string, args ...any) error {
	return &Waiting{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// AsWaiting reports whether err is (or wraps) a Waiting.
func AsWaiting(err error) (*Waiting, bool) {
	var w *Waiting
	ok := errors.As(err, &w)
	return w, ok
}
