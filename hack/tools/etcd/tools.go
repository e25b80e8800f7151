//go:build tools

// Package tools pins etcd for the toolchain cache.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
)
