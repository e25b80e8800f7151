package cluster

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestKubeletConfig holds what this machine needs from the kubelet: cgroup v1 allowed,
// cgroupfs under the cluster's own cgroup, containerd's socket, no image collection.
func TestKubeletConfig(t *testing.T) {
	o := testOptions(t)
	raw, err := kubeletConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"kind": "KubeletConfiguration", "failCgroupV1": false, "cgroupDriver": "cgroupfs", "cgroupRoot": "/terraplane-cluster",
		"containerRuntimeEndpoint": "unix://" + o.Dir + "/run/containerd.sock", "address": "10.254.0.1",
		"imageGCHighThresholdPercent": float64(100), "readOnlyPort": float64(0),
	}
	for k, v := range want {
		if !cmp.Equal(got[k], v) {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	auth := got["authentication"].(map[string]any)
	if auth["anonymous"].(map[string]any)["enabled"] != false || auth["webhook"].(map[string]any)["enabled"] != true {
		t.Errorf("authentication %v", auth)
	}
}

// TestKubeProxyConfig: iptables, node ports only on the node address, no localhost node
// ports (which would turn on route_localnet), conntrack settings left alone.
func TestKubeProxyConfig(t *testing.T) {
	o := testOptions(t)
	raw, err := kubeProxyConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Mode              string   `json:"mode"`
		ClusterCIDR       string   `json:"clusterCIDR"`
		NodePortAddresses []string `json:"nodePortAddresses"`
		IPTables          struct {
			LocalhostNodePorts *bool `json:"localhostNodePorts"`
		} `json:"iptables"`
		Conntrack struct {
			MaxPerCore *int `json:"maxPerCore"`
		} `json:"conntrack"`
	}
	if err := yaml.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.Mode != "iptables" || got.ClusterCIDR != o.PodCIDR || !cmp.Equal(got.NodePortAddresses, []string{"10.254.0.1/32"}) {
		t.Errorf("mode %q clusterCIDR %q nodePortAddresses %v", got.Mode, got.ClusterCIDR, got.NodePortAddresses)
	}
	if got.IPTables.LocalhostNodePorts == nil || *got.IPTables.LocalhostNodePorts {
		t.Error("localhostNodePorts is not false")
	}
	if got.Conntrack.MaxPerCore == nil || *got.Conntrack.MaxPerCore != 0 {
		t.Error("conntrack maxPerCore is not 0 (leave the limit alone)")
	}
}

// TestCNIConfig: the bridge and host-local plugins, the pod range, IPAM data under the
// cluster's directory, no masquerading rules.
func TestCNIConfig(t *testing.T) {
	o := testOptions(t)
	raw, err := cniConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Name    string `json:"name"`
		Plugins []struct {
			Type   string `json:"type"`
			Bridge string `json:"bridge"`
			IPMasq bool   `json:"ipMasq"`
			IPAM   struct {
				Type    string                `json:"type"`
				Ranges  [][]map[string]string `json:"ranges"`
				DataDir string                `json:"dataDir"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Plugins) != 1 {
		t.Fatalf("plugins %+v", got.Plugins)
	}
	p := got.Plugins[0]
	if p.Type != "bridge" || p.Bridge != "tp-cni0" || p.IPMasq || p.IPAM.Type != "host-local" ||
		p.IPAM.Ranges[0][0]["subnet"] != o.PodCIDR || p.IPAM.DataDir != o.Dir+"/cni/ipam" {
		t.Errorf("bridge plugin %+v", p)
	}
}
