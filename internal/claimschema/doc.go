// Package claimschema turns a Terraform module's variables into the OpenAPI v3 schema of
// a defined claim kind's spec.parameters: types, descriptions, required variables,
// defaults, sensitive variables as Secret references, and validation blocks as CEL rules
// where they translate cleanly and the API server accepts them (compiled as it compiles
// them, within its cost budget). It also compares two such schemas for changes that would
// break existing claims. It has no Kubernetes client and does no I/O.
package claimschema
