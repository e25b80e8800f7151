// Package modsource fetches user-supplied Terraform modules — from a ConfigMap, a git
// repository (go-git, over HTTPS, SSH or file://) or an OCI artifact (go-containerregistry)
// — with credentials from Secrets, inspects them, and caches them by content identity
// (commit, digest, resourceVersion) so an unchanged source is read once. Branches, tags
// and OCI tags are looked up again every refresh interval; commits and digests are pinned.
// Which sources are allowed is the administrator's choice (an allow-list).
package modsource
