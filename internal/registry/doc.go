// Package registry holds kind registrations: a managed kind is its Go type, its class,
// its bundled module, how its Provider becomes provider blocks and environment, and which
// outputs become connection keys; a claim kind is its type, its portable class and one
// configurator per managed kind that can satisfy it.
package registry
