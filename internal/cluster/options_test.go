package cluster

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDefaults fills what is unset, keeps what is set, and refuses addresses a node
// cannot use.
func TestDefaults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      Options
		want    func(Options) Options
		wantErr string
	}{
		{name: "all defaults", in: Options{Dir: "/x"}, want: func(o Options) Options {
			return Options{Dir: "/x", Bin: "/cache/bin", PauseTarball: "/cache/images/pause.tar", CNIBin: "/usr/lib/cni",
				NodeIP: "10.254.0.1", NodeName: "terraplane-node", PodCIDR: "10.254.64.0/24", ServiceCIDR: "10.254.128.0/24", APIPort: 6443}
		}},
		{name: "set fields kept", in: Options{Dir: "/y", NodeIP: "10.9.0.1", APIPort: 7443, Fresh: true}, want: func(o Options) Options {
			o.Bin, o.PauseTarball, o.CNIBin = "/cache/bin", "/cache/images/pause.tar", "/usr/lib/cni"
			o.NodeName, o.PodCIDR, o.ServiceCIDR = "terraplane-node", "10.254.64.0/24", "10.254.128.0/24"
			return o
		}},
		{name: "loopback refused", in: Options{Dir: "/x", NodeIP: "127.0.0.2"}, wantErr: "outside 127.0.0.0/8"},
		{name: "IPv6 refused", in: Options{Dir: "/x", NodeIP: "fd00::1"}, wantErr: "IPv4"},
		{name: "bad range", in: Options{Dir: "/x", PodCIDR: "10.0.0.0"}, wantErr: "address range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.in.Defaults("/cache")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want(tc.in), got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestServiceIP is the first address of the Service range, the kubernetes Service's.
func TestServiceIP(t *testing.T) {
	for cidr, want := range map[string]string{"10.254.128.0/24": "10.254.128.1", "10.96.0.0/12": "10.96.0.1", "192.168.7.0/28": "192.168.7.1"} {
		if got := (Options{ServiceCIDR: cidr}).serviceIP(); got != want {
			t.Errorf("%s: %s, want %s", cidr, got, want)
		}
	}
}
