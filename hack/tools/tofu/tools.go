//go:build tools

// Package tools pins OpenTofu for the toolchain cache.
package tools

import (
	_ "github.com/opentofu/opentofu/cmd/tofu"
)
