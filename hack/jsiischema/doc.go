// Command jsiischema turns the JSII assembly of a Terraform CDK provider binding
// (@cdktf/provider-google, @cdktf/provider-azurerm) into the provider schema JSON that
// `terraform providers schema -json` prints, for the resources and data sources a set of
// modules uses, and the provider's own configuration.
//
// The assembly (.jsii) lists every argument of a resource in its ...Config struct, with
// its type and whether it is optional; each property's documentation links the registry
// page with #<attribute_name>, the exact snake_case name. What the assembly does not
// hold, the package's generated JavaScript (lib/<resource>/index.js, from the same
// schema) does: which attributes are computed, and which lists are sets. Neither records
// which attributes are sensitive: a short table (sensitive.go) says so for the attributes
// the bundled modules reach, as the providers' documentation does.
//
//	go run ./hack/jsiischema -package ~/.cache/terraplane/npm/provider-google-16.12.1/package \
//	  -provider hashicorp/google -out google.json tfmodules/gcp
package main
