// Package plugins keeps Terraform provider plugin processes warm between terraform runs
// and lends them to runs through Terraform's reattach protocol (TF_REATTACH_PROVIDERS),
// so that a run starts no provider. A process is keyed by its provider binary, the
// environment it runs with (credentials included) and the workspace's provider
// configuration; it serves several runs at once, lives for a TTL and a number of uses,
// and is replaced when it crashes or a run using it is interrupted. A run's request to
// stop reaches the provider only once every run it serves has asked. Each process is reached
// through a proxy that answers the provider's pure calls (its schema, metadata,
// functions and provider-config validation) from a cache shared by every process of
// the same binary: for large providers those calls cost more CPU than the plan itself.
package plugins
