// Package layers holds no code: its tests keep docs/architecture.md true (every package
// under internal/ and controllers/ named in it) and its import rules (the packages that
// stay free of Kubernetes, no test suite importing a controller), reading the packages
// and their imports with `go list`.
package layers
