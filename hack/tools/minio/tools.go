//go:build tools

// Package tools pins minio for the toolchain cache.
package tools

import (
	_ "github.com/minio/minio"
)
