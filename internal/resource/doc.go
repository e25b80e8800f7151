// Package resource defines the interfaces that let one claim reconciler and one managed
// reconciler serve every kind, plus the helpers they share.
package resource
