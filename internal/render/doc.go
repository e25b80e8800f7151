// Package render turns a module, its input values, provider settings and a state backend
// into the files of one Terraform workspace. It is pure: no I/O, no Kubernetes, golden-tested.
//
// User-supplied values never enter configuration text: module inputs and provider
// settings reach Terraform only through terraform.tfvars.json, referenced from the
// generated root module, so "${...}" in a claim stays literal.
package render
