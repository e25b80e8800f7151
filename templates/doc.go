// Package templates holds the structural text Terraplane writes around user modules:
// the Terraform CLI configuration that points every workspace at the shared provider mirror.
package templates

import _ "embed"

// CLIConfig is a text/template for the Terraform CLI configuration file. Fields:
// Mirror (filesystem mirror directory) and Direct (also allow the network).
//
//go:embed cli.tfrc.tmpl
var CLIConfig string
