// Package devenv starts the local pieces `terraplane dev` and the tests need: a control
// plane (etcd + kube-apiserver from the toolchain cache, with Terraplane's CRDs), a
// kubeconfig for it, and a MinIO server on loopback.
package devenv
