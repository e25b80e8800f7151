//go:build !linux

package engine

// atNice runs fn: outside Linux every terraform process runs at the caller's priority.
func atNice(_ int, fn func() error) error { return fn() }
