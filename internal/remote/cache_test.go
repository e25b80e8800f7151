package remote

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"terraplane.io/terraplane/internal/resource"
)

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://kube.example:6443"}
users:
- name: u
  user: {token: s3cret-token}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`

func TestRestConfig(t *testing.T) {
	self := &rest.Config{Host: "https://control:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("control-ca")}}
	c := &Cache{self: self}
	type want struct {
		Host, Token, User string
		CA, Cert          string
	}
	cases := map[string]struct {
		typ    corev1.SecretType
		data   map[string]string
		want   want
		reason string
	}{
		"kubeconfig":           {data: map[string]string{"kubeconfig": kubeconfig}, want: want{Host: "https://kube.example:6443", Token: "s3cret-token"}},
		"fields with certs":    {data: map[string]string{"endpoint": "https://e:6443", "clusterCA": "ca", "clientCert": "cert", "clientKey": "key"}, want: want{Host: "https://e:6443", CA: "ca", Cert: "cert"}},
		"fields with password": {data: map[string]string{"endpoint": "https://e", "username": "admin", "password": "pw"}, want: want{Host: "https://e", User: "admin"}},
		"service account token of the control cluster": {data: map[string]string{"token": "t", "ca.crt": "sa-ca"}, want: want{Host: "https://control:6443", Token: "t", CA: "sa-ca"}},
		"service account token Secret type":            {typ: corev1.SecretTypeServiceAccountToken, data: map[string]string{"token": "t"}, want: want{Host: "https://control:6443", Token: "t", CA: "control-ca"}},
		"broken kubeconfig":                            {data: map[string]string{"kubeconfig": "{not yaml: [s3cret"}, reason: "InvalidCredentials"},
		"no endpoint":                                  {data: map[string]string{"token": "t"}, reason: "InvalidCredentials"},
		"no credentials":                               {data: map[string]string{"endpoint": "https://e"}, reason: "InvalidCredentials"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "creds"}, Type: tc.typ, Data: map[string][]byte{}}
			for k, v := range tc.data {
				s.Data[k] = []byte(v)
			}
			cfg, err := c.restConfig(s)
			if tc.reason != "" {
				u, ok := resource.AsUserError(err)
				if !ok || u.Reason != tc.reason {
					t.Fatalf("want user error %s, got %v", tc.reason, err)
				}
				for _, v := range tc.data {
					if len(v) > 3 && strings.Contains(u.Message, v) {
						t.Errorf("message %q shows a secret value", u.Message)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := want{Host: cfg.Host, Token: cfg.BearerToken, User: cfg.Username, CA: string(cfg.CAData), Cert: string(cfg.CertData)}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("rest config (-want +got):\n%s", d)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	netErr := &url.Error{Op: "Get", URL: "https://e", Err: errors.New("connection refused")}
	if _, ok := AsUnreachable(Classify("https://e", netErr)); !ok {
		t.Error("a connection error is Unreachable")
	}
	if _, ok := AsUnreachable(Classify("https://e", context.DeadlineExceeded)); !ok {
		t.Error("a deadline is Unreachable")
	}
	if _, ok := AsUnreachable(Classify("https://e", errors.New("forbidden"))); ok {
		t.Error("other errors are not Unreachable")
	}
	if Classify("h", nil) != nil {
		t.Error("nil stays nil")
	}
}
