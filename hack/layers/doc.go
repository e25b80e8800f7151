// Package layers holds no code: its tests keep the import rules of docs/architecture.md
// (the packages that stay free of Kubernetes, no test suite importing a controller),
// reading the import graph with `go list`.
package layers
