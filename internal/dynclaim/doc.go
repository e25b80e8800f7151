// Package dynclaim serves claim kinds defined at run time (ClaimDefinition), which have
// no Go type of their own: one Claim and one Class type stand for every defined kind,
// and Client reads and writes them as unstructured objects of their kind, so the claim
// reconciler works on them as on any compiled-in kind.
package dynclaim
