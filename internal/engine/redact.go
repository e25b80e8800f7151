package engine

import (
	"errors"
	"sort"
	"strings"
)

// RedactedError is an error whose message had secret values removed.
type RedactedError struct{ msg string }

// Error returns the redacted message.
func (e *RedactedError) Error() string { return e.msg }

// Redact returns err with every secret value in its message replaced by "(redacted)".
// The original error is dropped, so no wrapped message can leak them later.
func Redact(err error, secrets map[string]string) error {
	if err == nil {
		return nil
	}
	var r *RedactedError
	if errors.As(err, &r) && len(secrets) == 0 {
		return err
	}
	return &RedactedError{msg: RedactString(err.Error(), secrets)}
}

// RedactString replaces every secret value (of 4 characters or more) in s.
func RedactString(s string, secrets map[string]string) string {
	values := make([]string, 0, len(secrets))
	for _, v := range secrets {
		if len(v) >= 4 {
			values = append(values, v)
		}
	}
	sort.Slice(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
	for _, v := range values {
		s = strings.ReplaceAll(s, v, "(redacted)")
	}
	return s
}
