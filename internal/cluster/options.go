package cluster

import (
	"fmt"
	"net"
	"path/filepath"
)

// Defaults of Options.
const (
	DefaultNodeIP      = "10.254.0.1"
	DefaultNodeName    = "terraplane-node"
	DefaultPodCIDR     = "10.254.64.0/24"
	DefaultServiceCIDR = "10.254.128.0/24"
	DefaultAPIPort     = 6443
	// PauseImage is the sandbox image's reference (hack/image pause writes it).
	PauseImage = "terraplane.local/pause:1"
	// cgroupRoot is the cgroup, in every hierarchy, under which the kubelet puts pods.
	cgroupRoot = "/terraplane-cluster"
	// bridgeName is the Linux bridge the CNI plugin connects pods to.
	bridgeName = "tp-cni0"
	// networkName is the CNI network's name.
	networkName = "terraplane"
)

// Options say where the cluster lives and how it is addressed.
type Options struct {
	// Dir holds everything the cluster makes (absolute after Defaults).
	Dir string
	// Bin holds the Kubernetes binaries and etcd (the tool cache's bin/).
	Bin string
	// PauseTarball is the sandbox image tarball (hack/install-tools.sh node writes it).
	PauseTarball string
	// CNIBin holds the CNI plugins (Debian's containernetworking-plugins).
	CNIBin string
	// NodeIP is the address, put on lo, every component listens on and pods reach the
	// node at; it must not be in use on the machine.
	NodeIP string
	// NodeName is the Node's name.
	NodeName string
	// PodCIDR and ServiceCIDR are the pods' and the Services' address ranges.
	PodCIDR, ServiceCIDR string
	// APIPort is kube-apiserver's port on NodeIP.
	APIPort int
	// Fresh starts with an empty etcd and kubelet state (the tests); otherwise a start
	// resumes with the objects of the last one.
	Fresh bool
}

// Defaults fills the zero fields of o and checks the rest.
func (o Options) Defaults(cache string) (Options, error) {
	set := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	set(&o.Dir, ".terraplane/cluster")
	set(&o.Bin, filepath.Join(cache, "bin"))
	set(&o.PauseTarball, filepath.Join(cache, "images", "pause.tar"))
	set(&o.CNIBin, "/usr/lib/cni")
	set(&o.NodeIP, DefaultNodeIP)
	set(&o.NodeName, DefaultNodeName)
	set(&o.PodCIDR, DefaultPodCIDR)
	set(&o.ServiceCIDR, DefaultServiceCIDR)
	if o.APIPort == 0 {
		o.APIPort = DefaultAPIPort
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return o, err
	}
	o.Dir = dir
	ip := net.ParseIP(o.NodeIP)
	if ip == nil || ip.To4() == nil || ip.IsLoopback() {
		return o, fmt.Errorf("node address %q: want an IPv4 address outside 127.0.0.0/8 (the API server may not advertise a loopback one)", o.NodeIP)
	}
	for _, c := range []string{o.PodCIDR, o.ServiceCIDR} {
		if _, _, err := net.ParseCIDR(c); err != nil {
			return o, fmt.Errorf("address range %q: %w", c, err)
		}
	}
	return o, nil
}

// ServiceIP is the kubernetes Service's address, the first of the Service range.
func (o Options) ServiceIP() string { return o.serviceIP() }

// serviceIP is the first address of the Service range: the kubernetes Service's.
func (o Options) serviceIP() string {
	_, n, _ := net.ParseCIDR(o.ServiceCIDR)
	ip := n.IP.To4()
	return net.IPv4(ip[0], ip[1], ip[2], ip[3]+1).String()
}

// APIServer is the API server's URL.
func (o Options) APIServer() string { return fmt.Sprintf("https://%s:%d", o.NodeIP, o.APIPort) }

// Kubeconfig is the admin kubeconfig's path.
func (o Options) Kubeconfig() string { return filepath.Join(o.Dir, "kubeconfig") }

// path joins elements under Dir.
func (o Options) path(elem ...string) string {
	return filepath.Join(append([]string{o.Dir}, elem...)...)
}

// socket is containerd's CRI and API socket.
func (o Options) socket() string { return o.path("run", "containerd.sock") }
