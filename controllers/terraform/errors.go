package terraform

import (
	"errors"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/statelock"
)

// terraformError maps what a run failed with to what the resource shows: a state lock
// held by another run, a fault only a user can fix (access denied, a name taken, a
// value terraform refuses) as a user error retried slowly, or the error itself, retried
// with backoff.
func terraformError(err error) error {
	if err = lockError(err); err == nil {
		return nil
	}
	if _, typed := resource.AsUserError(err); typed {
		return err
	}
	if reason, ok := engine.UserFault(err); ok {
		return resource.UserErrorf(reason, "%s", engine.Summary(err))
	}
	return err
}

// lockError maps a state lock someone else holds to what the resource shows: waiting
// for a live run of another Terraplane process, or StateLocked for a lock only a person
// can release.
func lockError(err error) error {
	var held *statelock.HeldError
	var foreign *statelock.StaleLockError
	switch {
	case errors.As(err, &held):
		return resource.Waitf(common.ReasonStateLocked, "%s", held.Error())
	case errors.As(err, &foreign):
		return resource.UserErrorf(common.ReasonStateLocked, "%s", foreign.Error())
	}
	return err
}
