//go:build tools

// Package tools pins kube-apiserver and kubectl for the toolchain cache.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
