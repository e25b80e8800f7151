//go:build tools

// Package tools pins kube-apiserver, kubectl and etcd for the toolchain cache. They are one
// module so that a cold build compiles their shared packages (grpc, the etcd client,
// protobuf) once: etcd is the version Kubernetes itself pins.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
