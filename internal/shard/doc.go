// Package shard splits the managed resources between controller replicas. Each resource
// belongs to one of a fixed number of shards (a hash of its UID); each shard is held by
// one replica at a time through a Lease; replicas announce themselves with a member
// Lease, and each holds about its fair share of the shards. A shard changes hands only
// when its holder lets it go after its runs in that shard have finished, or when its
// Lease has expired, so two replicas never work on the same resource at once.
package shard
