// Package sharding runs three `terraplane controller` replicas, sharded, against one
// API server: the Modules split between them, one replica is killed, and every Module
// still becomes Ready with no state lock conflict and no apply twice.
package sharding
