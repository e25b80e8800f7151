// Package devenv starts the local pieces `terraplane dev` and the tests need: a control
// plane (etcd + kube-apiserver from the toolchain cache, with Terraplane's CRDs), a
// kubeconfig for it, moto_server (the AWS API emulator: the quickstart's S3) and a MinIO
// server (the tests' S3) on loopback.
package devenv
