// Package module reads a Terraform module's variables and outputs with hcl/v2, without
// running terraform. The ModuleClass status, the renderer and `terraplane module inspect`
// all use it.
package module
