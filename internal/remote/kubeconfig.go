package remote

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// AllowExecFlag is the controller flag that lets kubeconfigs from Secrets run commands
// and read files inside the controller.
const AllowExecFlag = "--allow-kubeconfig-exec"

// kubeconfigRESTConfig builds the client configuration of key kubeconfig of Secret
// ns/name. Unless allowUnsafe, a kubeconfig that would run a command (exec,
// auth-provider) or read a file (tokenFile, certificate and key paths) inside the
// controller is an UnsafeKubeconfig user error naming the fields: whoever writes the
// Secret would otherwise act as the controller. Messages name fields, never values.
func kubeconfigRESTConfig(kc []byte, ns, name string, allowUnsafe bool) (*rest.Config, error) {
	invalid := resource.UserErrorf("InvalidCredentials", "key %s of Secret %s/%s is not a usable kubeconfig", KeyKubeconfig, ns, name)
	if !allowUnsafe {
		fields, err := unsafeKubeconfigFields(kc)
		if err != nil {
			return nil, invalid
		}
		if len(fields) > 0 {
			return nil, resource.UserErrorf(common.ReasonUnsafeKubeconfig,
				"key %s of Secret %s/%s sets %s, which would run a command or read a file inside the controller: put the credentials in the kubeconfig itself (token, client-certificate-data, client-key-data, certificate-authority-data), or run the controller with %s",
				KeyKubeconfig, ns, name, strings.Join(fields, ", "), AllowExecFlag)
		}
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		return nil, invalid
	}
	return cfg, nil
}

// unsafeKubeconfigFields lists, sorted, the fields anywhere in a kubeconfig (not only in
// its current context) that would run a command or read a file: users' exec,
// auth-provider, tokenFile, client-certificate and client-key, and clusters'
// certificate-authority. A kubeconfig read from a Secret has no location of origin, so
// any path would be resolved on the controller's own file system.
func unsafeKubeconfigFields(kc []byte) ([]string, error) {
	cfg, err := clientcmd.Load(kc)
	if err != nil {
		return nil, fmt.Errorf("parse kubeconfig: %w", err)
	}
	var out []string
	for name, u := range cfg.AuthInfos {
		out = append(out, unsafeUserFields(name, u)...)
	}
	for name, c := range cfg.Clusters {
		if c != nil && c.CertificateAuthority != "" {
			out = append(out, fmt.Sprintf("clusters[%s].cluster.certificate-authority", name))
		}
	}
	sort.Strings(out)
	return out, nil
}

// unsafeUserFields lists the fields of user entry name that run commands or read files.
func unsafeUserFields(name string, u *clientcmdapi.AuthInfo) []string {
	if u == nil {
		return nil
	}
	var out []string
	for field, set := range map[string]bool{
		"exec":               u.Exec != nil,
		"auth-provider":      u.AuthProvider != nil,
		"tokenFile":          u.TokenFile != "",
		"client-certificate": u.ClientCertificate != "",
		"client-key":         u.ClientKey != "",
	} {
		if set {
			out = append(out, fmt.Sprintf("users[%s].user.%s", name, field))
		}
	}
	return out
}
