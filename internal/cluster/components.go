package cluster

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// component is a daemon of the cluster: its binary, its arguments, and the URL that
// answers 200 once it is up (empty: its own wait).
type component struct {
	name   string
	binary string
	args   []string
	health string
}

// components are the daemons in the order they start (Stop goes the other way).
func components(o Options) []component {
	bin := func(name string) string { return filepath.Join(o.Bin, name) }
	ip := o.NodeIP
	auth := func(client string) []string {
		kc := o.kubeconfig(client)
		return []string{"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc}
	}
	return []component{
		{name: "containerd", binary: "containerd", args: []string{"--config", o.path("config", "containerd.toml")}},
		{name: "etcd", binary: bin("etcd"), health: "http://" + ip + ":2379/health", args: []string{
			"--name=node", "--data-dir=" + o.path("etcd"),
			"--listen-client-urls=http://" + ip + ":2379", "--advertise-client-urls=http://" + ip + ":2379",
			"--listen-peer-urls=http://" + ip + ":2380", "--initial-advertise-peer-urls=http://" + ip + ":2380",
			"--initial-cluster=node=http://" + ip + ":2380", "--unsafe-no-fsync", "--log-level=warn",
		}},
		{name: "kube-apiserver", binary: bin("kube-apiserver"), health: o.APIServer() + "/readyz", args: []string{
			"--etcd-servers=http://" + ip + ":2379",
			"--bind-address=" + ip, "--advertise-address=" + ip, "--secure-port=" + strconv.Itoa(o.APIPort),
			"--tls-cert-file=" + o.pki("apiserver.crt"), "--tls-private-key-file=" + o.pki("apiserver.key"),
			"--client-ca-file=" + o.pki("ca.crt"),
			"--service-cluster-ip-range=" + o.ServiceCIDR,
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + o.pki("sa.pub"), "--service-account-signing-key-file=" + o.pki("sa.key"),
			"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
			"--kubelet-client-certificate=" + o.pki("apiserver-kubelet-client.crt"),
			"--kubelet-client-key=" + o.pki("apiserver-kubelet-client.key"),
			"--kubelet-certificate-authority=" + o.pki("ca.crt"),
			"--kubelet-preferred-address-types=InternalIP", "--profiling=false",
		}},
		{name: "kube-controller-manager", binary: bin("kube-controller-manager"), health: fmt.Sprintf("https://%s:10257/healthz", ip),
			args: append(auth("kube-controller-manager"),
				"--bind-address="+ip, "--secure-port=10257", "--leader-elect=false",
				"--service-account-private-key-file="+o.pki("sa.key"), "--root-ca-file="+o.pki("ca.crt"),
				"--use-service-account-credentials=true", "--service-cluster-ip-range="+o.ServiceCIDR,
				"--cluster-signing-cert-file="+o.pki("ca.crt"), "--cluster-signing-key-file="+o.pki("ca.key"),
				"--profiling=false")},
		{name: "kube-scheduler", binary: bin("kube-scheduler"), health: fmt.Sprintf("https://%s:10259/healthz", ip),
			args: append(auth("kube-scheduler"), "--bind-address="+ip, "--secure-port=10259", "--leader-elect=false", "--profiling=false")},
		{name: "kubelet", binary: bin("kubelet"), health: fmt.Sprintf("http://%s:10248/healthz", ip), args: []string{
			"--config=" + o.path("config", "kubelet.yaml"), "--kubeconfig=" + o.kubeconfig("kubelet"),
			"--root-dir=" + o.path("kubelet"), "--cert-dir=" + o.path("kubelet", "pki"),
			"--hostname-override=" + o.NodeName, "--node-ip=" + ip,
		}},
		{name: "kube-proxy", binary: bin("kube-proxy"), health: fmt.Sprintf("http://%s:10256/healthz", ip),
			args: []string{"--config=" + o.path("config", "kube-proxy.yaml")}},
	}
}
