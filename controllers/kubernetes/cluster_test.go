package kubernetes

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestClusterConnection(t *testing.T) {
	cases := map[string]struct {
		data map[string][]byte
		want map[string][]byte
	}{
		"kubeconfig passes through alone": {
			map[string][]byte{"kubeconfig": []byte("kc"), "unrelated": []byte("x")},
			map[string][]byte{"kubeconfig": []byte("kc")},
		},
		"fields pass through": {
			map[string][]byte{"endpoint": []byte("https://h:6443"), "clusterCA": []byte("ca"), "clientCert": []byte("c"), "clientKey": []byte("k")},
			map[string][]byte{"endpoint": []byte("https://h:6443"), "clusterCA": []byte("ca"), "clientCert": []byte("c"), "clientKey": []byte("k")},
		},
		"ServiceAccount token gets the endpoint and clusterCA": {
			map[string][]byte{"token": []byte("t"), "ca.crt": []byte("ca"), "namespace": []byte("ns")},
			map[string][]byte{"token": []byte("t"), "clusterCA": []byte("ca"), "endpoint": []byte("https://self:6443")},
		},
	}
	for name, c := range cases {
		got := clusterConnection(&corev1.Secret{Data: c.data}, "https://self:6443")
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}
