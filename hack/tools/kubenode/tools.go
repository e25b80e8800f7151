//go:build tools

// Package tools pins the Kubernetes components 'make cluster' runs besides etcd and
// kube-apiserver (hack/tools/kube): the scheduler, the controller manager, the kubelet
// and kube-proxy, at the same k8s.io/kubernetes version as kube-apiserver.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
