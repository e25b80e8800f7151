// Package resourcepool holds the rules of ResourcePools that both the pool controller and
// the claim controller follow: a member's state, how many members to make or remove, which
// ready member a claim takes, the records of a hand-out (annotations), the auto-scaler's
// decisions for pools of clusters and a cluster's room for applications (which the
// scheduler follows), and the pools' metrics. It reads claims of any kind as
// unstructured objects and does no I/O.
package resourcepool
