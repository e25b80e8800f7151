// Package render turns a module, its input values, provider settings and a state backend
// into the files of one Terraform workspace. It is pure: no I/O, no Kubernetes, golden-tested.
//
// User-supplied values never enter configuration text: module inputs reach Terraform only
// through terraform.tfvars.json and provider settings through terraplane-providers.json
// (read with jsondecode), both referenced from the generated root module, so "${...}" in
// a claim stays literal.
package render
