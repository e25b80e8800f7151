// Command standin-provider is a schema-faithful stand-in for a Terraform provider that
// cannot be run in tests (hashicorp/google, hashicorp/azurerm): it serves the provider's
// real schema (made by hack/jsiischema from the published CDK bindings) over plugin
// protocol 5, so that terraform validates configurations against it, and it plans and
// applies without a cloud: computed attributes get deterministic values, reads return
// the stored state. Every call is recorded, one JSON line each, in the file that
// TERRAPLANE_STANDIN_LOG names. See README.md for what it proves and what it does not.
package main
