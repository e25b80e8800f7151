// Package cluster runs a real one-node Kubernetes cluster on this machine, for `make
// cluster` and the install tests: containerd and runc with the bridge CNI plugin, etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, a kubelet and kube-proxy, all
// bound to one address on the loopback device. It needs root, and the binaries that
// `hack/install-tools.sh cluster` installs.
//
// Everything it makes lies under one directory (certificates, configuration, etcd's and
// containerd's data, the kubelet's root, logs and process ids), except what a node has to
// change on the host: the address on lo, a bridge, kube-proxy's iptables rules, cgroups
// under /terraplane-cluster, and the kernel settings the kubelet and the bridge plugin
// set. Stop kills every process, unmounts every mount under the directory, and undoes
// those host changes, restoring the kernel settings it found.
package cluster
