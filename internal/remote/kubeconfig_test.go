package remote

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// kubeconfigWith is a kubeconfig whose cluster c and user u carry the given YAML fields.
func kubeconfigWith(cluster, user string) string {
	return `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://kube.example:6443"` + cluster + `}
users:
- name: u
  user: {` + user + `}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`
}

func TestUnsafeKubeconfigFields(t *testing.T) {
	cases := map[string]struct {
		kubeconfig string
		want       []string
	}{
		"token":                 {kubeconfig: kubeconfigWith("", "token: t")},
		"inline certificates":   {kubeconfig: kubeconfigWith(", certificate-authority-data: Y2E=", "client-certificate-data: Y2VydA==, client-key-data: a2V5")},
		"username and password": {kubeconfig: kubeconfigWith("", "username: a, password: b")},
		"exec": {kubeconfig: kubeconfigWith("", "exec: {apiVersion: client.authentication.k8s.io/v1, command: id}"),
			want: []string{"users[u].user.exec"}},
		"auth-provider": {kubeconfig: kubeconfigWith("", "auth-provider: {name: oidc, config: {idp-issuer-url: https://idp.example}}"),
			want: []string{"users[u].user.auth-provider"}},
		"tokenFile": {kubeconfig: kubeconfigWith("", "tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token"),
			want: []string{"users[u].user.tokenFile"}},
		"client certificate and key files": {kubeconfig: kubeconfigWith("", "client-certificate: /etc/cert.pem, client-key: key.pem"),
			want: []string{"users[u].user.client-certificate", "users[u].user.client-key"}},
		"certificate authority file": {kubeconfig: kubeconfigWith(", certificate-authority: /etc/ca.pem", "token: t"),
			want: []string{"clusters[c].cluster.certificate-authority"}},
		"a user no context uses": {kubeconfig: strings.Replace(kubeconfigWith("", "token: t"), "contexts:",
			"- name: other\n  user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: id}}\ncontexts:", 1),
			want: []string{"users[other].user.exec"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := unsafeKubeconfigFields([]byte(tc.kubeconfig))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("unsafe fields (-want +got):\n%s", d)
			}
		})
	}
	if _, err := unsafeKubeconfigFields([]byte("{not yaml: [")); err == nil {
		t.Error("a broken kubeconfig is an error")
	}
}

func TestRestConfigRefusesUnsafeKubeconfig(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	exec := kubeconfigWith("", `exec: {apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, command: /bin/sh, args: ["-c", "touch `+marker+`"]}`)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("controller-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		kubeconfig string
		field      string
	}{
		"exec":      {kubeconfig: exec, field: "users[u].user.exec"},
		"tokenFile": {kubeconfig: kubeconfigWith("", "tokenFile: "+tokenFile), field: "users[u].user.tokenFile"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "creds"}, Data: map[string][]byte{"kubeconfig": []byte(tc.kubeconfig)}}
			_, err := (&Cache{}).restConfig(s)
			u, ok := resource.AsUserError(err)
			if !ok || u.Reason != common.ReasonUnsafeKubeconfig {
				t.Fatalf("want user error %s, got %v", common.ReasonUnsafeKubeconfig, err)
			}
			for _, want := range []string{tc.field, "ns/creds", "--allow-kubeconfig-exec"} {
				if !strings.Contains(u.Message, want) {
					t.Errorf("message %q does not name %q", u.Message, want)
				}
			}
			cfg, err := (&Cache{AllowKubeconfigExec: true}).restConfig(s)
			if err != nil {
				t.Fatalf("with AllowKubeconfigExec: %v", err)
			}
			if name == "tokenFile" && cfg.BearerToken != "controller-token" {
				t.Errorf("with AllowKubeconfigExec the token file is read, got token %q", cfg.BearerToken)
			}
		})
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("building a client ran the exec command (%v)", err)
	}
}
