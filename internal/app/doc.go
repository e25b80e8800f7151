// Package app assembles Terraplane's controller manager: the engine, the registry of
// kinds, and the claim and managed reconcilers, for `terraplane controller`, `terraplane dev`
// and the tests alike.
package app
