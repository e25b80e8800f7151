// Package intake paces how claims are taken in: in each namespace, at most a set number
// of new managed resources wait for their first apply at once, and the claims beyond
// wait their turn, the claim made first going first.
package intake
