// Package resourcepool reconciles ResourcePools: it keeps spec.size members (claims of the
// template's kind, labelled terraplane.io/pool) in the pool's namespace, finishes or undoes
// the hand-outs the claim reconciler started, and counts the members in the status.
package resourcepool
