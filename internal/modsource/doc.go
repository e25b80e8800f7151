// Package modsource fetches user-supplied Terraform modules — from a ConfigMap or a git
// repository at a pinned ref — inspects them, and caches them so an unchanged source is
// read once. Which sources are allowed is the administrator's choice (an allow-list).
package modsource
