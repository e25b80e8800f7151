// Package workspace renders a managed resource into the Terraform workspace the engine
// runs: its module, inputs, providers, imports and state backend. The managed reconciler
// and the migrate and export tools share it, so all three see the same configuration.
package workspace
