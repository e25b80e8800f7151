package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// containerdConfig is containerd's configuration: its own root, state and socket under
// Dir, the CRI plugin with the pause image, network namespaces under its state directory,
// the CNI plugins, runc with cgroupfs. restrict_oom_score_adj keeps containers' OOM score
// adjustments at or above containerd's own: the kubelet asks for -998 for every pod's
// sandbox, which needs CAP_SYS_RESOURCE, and a machine may withhold it (this one does,
// and runc then fails with "failed to update /proc/self/oom_score_adj: Permission denied").
func containerdConfig(o Options) string {
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	return `version = 2
root = ` + q(o.path("containerd", "root")) + `
state = ` + q(o.path("containerd", "state")) + `
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = ` + q(o.socket()) + `

[ttrpc]
  address = ` + q(o.socket()+".ttrpc") + `

[plugins."io.containerd.internal.v1.opt"]
  path = ` + q(o.path("containerd", "opt")) + `

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ` + q(PauseImage) + `
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = ` + q(o.CNIBin) + `
    conf_dir = ` + q(o.path("cni", "net.d")) + `
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = ` + q(o.path("containerd", "runc")) + `
`
}

// cniConfig is the pods' network: a bridge with the node as gateway and addresses from
// PodCIDR (host-local, its data under Dir). No masquerading: pods reach only the node.
func cniConfig(o Options) ([]byte, error) {
	return json.MarshalIndent(map[string]any{
		"cniVersion": "1.0.0",
		"name":       networkName,
		"plugins": []any{map[string]any{
			"type": "bridge", "bridge": bridgeName, "isGateway": true, "ipMasq": false, "hairpinMode": true,
			"ipam": map[string]any{
				"type":    "host-local",
				"ranges":  []any{[]any{map[string]any{"subnet": o.PodCIDR}}},
				"routes":  []any{map[string]any{"dst": "0.0.0.0/0"}},
				"dataDir": o.path("cni", "ipam"),
			},
		}},
	}, "", "  ")
}

// kubeletConfig is the KubeletConfiguration: cgroupfs under cgroupRoot, cgroup v1
// allowed, containerd's socket, the serving certificate signed by the cluster's CA,
// webhook authentication and authorization, and no image garbage collection (images are
// imported, never pulled, so a collected one could not come back).
func kubeletConfig(o Options) ([]byte, error) {
	return yaml.Marshal(map[string]any{
		"apiVersion":               "kubelet.config.k8s.io/v1beta1",
		"kind":                     "KubeletConfiguration",
		"failCgroupV1":             false,
		"cgroupDriver":             "cgroupfs",
		"cgroupRoot":               cgroupRoot,
		"containerRuntimeEndpoint": "unix://" + o.socket(),
		"address":                  o.NodeIP,
		"port":                     10250,
		"readOnlyPort":             0,
		"healthzBindAddress":       o.NodeIP,
		"healthzPort":              10248,
		"tlsCertFile":              o.pki("kubelet-serving.crt"),
		"tlsPrivateKeyFile":        o.pki("kubelet-serving.key"),
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			"x509":      map[string]any{"clientCAFile": o.pki("ca.crt")},
		},
		"authorization":               map[string]any{"mode": "Webhook"},
		"clusterDomain":               "cluster.local",
		"resolvConf":                  "/etc/resolv.conf",
		"failSwapOn":                  false,
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"evictionHard":                map[string]string{"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
		"serializeImagePulls":         false,
		"nodeStatusReportFrequency":   "10s",
		"syncFrequency":               "10s",
		"fileCheckFrequency":          "10s",
		"staticPodPath":               "",
		"podPidsLimit":                4096,
	})
}

// kubeProxyConfig is kube-proxy's configuration: iptables, node ports only on NodeIP and
// not on 127.0.0.1 (which would need route_localnet), the conntrack settings left as
// they are.
func kubeProxyConfig(o Options) ([]byte, error) {
	return yaml.Marshal(map[string]any{
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"kind":               "KubeProxyConfiguration",
		"mode":               "iptables",
		"clientConnection":   map[string]any{"kubeconfig": o.kubeconfig("kube-proxy")},
		"hostnameOverride":   o.NodeName,
		"bindAddress":        o.NodeIP,
		"healthzBindAddress": o.NodeIP + ":10256",
		"metricsBindAddress": o.NodeIP + ":10249",
		"clusterCIDR":        o.PodCIDR,
		"nodePortAddresses":  []string{o.NodeIP + "/32"},
		"iptables":           map[string]any{"localhostNodePorts": false},
		"conntrack": map[string]any{"maxPerCore": 0, "min": 0,
			"tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
	})
}

// writeConfigs writes the configuration files of containerd, the CNI network, the kubelet
// and kube-proxy.
func writeConfigs(o Options) error {
	cni, err := cniConfig(o)
	if err != nil {
		return err
	}
	kubelet, err := kubeletConfig(o)
	if err != nil {
		return err
	}
	proxy, err := kubeProxyConfig(o)
	if err != nil {
		return err
	}
	for path, data := range map[string][]byte{
		o.path("config", "containerd.toml"):              []byte(containerdConfig(o)),
		o.path("cni", "net.d", "10-terraplane.conflist"): cni,
		o.path("config", "kubelet.yaml"):                 kubelet,
		o.path("config", "kube-proxy.yaml"):              proxy,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}
