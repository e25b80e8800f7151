//go:build tools

// Package tools pins provider-random for the toolchain cache.
package tools

import (
	_ "github.com/terraform-providers/terraform-provider-random"
)
