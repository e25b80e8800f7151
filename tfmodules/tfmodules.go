// Package tfmodules embeds the bundled Terraform modules, one directory per
// <provider>/<kind>, that managed kinds are rendered from.
package tfmodules

import "embed"

// FS holds every bundled module.
//
//go:embed all:aws all:postgresql all:mysql all:gcp all:azure all:demo
var FS embed.FS
