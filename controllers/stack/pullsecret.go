package stack

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/resource"
)

// ReasonPullSecret says the install's pull secret is missing or unreadable.
const ReasonPullSecret = "PullSecretInvalid"

// remoteFor returns the registry options of an install: its pull secret first, then the
// manager's docker keychain.
func (r *InstallReconciler) remoteFor(ctx context.Context, in *install) ([]remote.Option, error) {
	name := in.obj.GetInstallSpec().PullSecretName
	if name == "" {
		return r.opts.Remote, nil
	}
	s := &corev1.Secret{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: in.obj.StackNamespace(), Name: name}, s)
	if apierrors.IsNotFound(err) {
		return nil, resource.UserErrorf(ReasonPullSecret, "pull secret %s/%s does not exist", in.obj.StackNamespace(), name)
	}
	if err != nil {
		return nil, fmt.Errorf("get pull secret: %w", err)
	}
	kc, err := parseDockerConfig(s.Data[corev1.DockerConfigJsonKey])
	if err != nil {
		return nil, resource.UserErrorf(ReasonPullSecret, "pull secret %s/%s: %v", s.Namespace, name, err)
	}
	return append(append([]remote.Option{}, r.opts.Remote...), remote.WithAuthFromKeychain(authn.NewMultiKeychain(kc, authn.DefaultKeychain))), nil
}

// secretKeychain answers for the registries a docker config names.
type secretKeychain map[string]authn.AuthConfig

// Resolve returns the registry's credentials, or anonymous so the next keychain is asked.
func (k secretKeychain) Resolve(t authn.Resource) (authn.Authenticator, error) {
	if c, ok := k[t.RegistryStr()]; ok {
		return authn.FromConfig(c), nil
	}
	return authn.Anonymous, nil
}

// parseDockerConfig reads a .dockerconfigjson; hosts may be written as URLs.
func parseDockerConfig(b []byte) (secretKeychain, error) {
	var cfg struct {
		Auths map[string]struct {
			Username string `json:"username"`
			Password string `json:"password"`
			Auth     string `json:"auth"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil || len(cfg.Auths) == 0 {
		return nil, fmt.Errorf("key %s must hold a docker config with auths", corev1.DockerConfigJsonKey)
	}
	kc := secretKeychain{}
	for host, a := range cfg.Auths {
		user, pass := a.Username, a.Password
		if a.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(a.Auth)
			if err != nil {
				return nil, fmt.Errorf("auth for %s is not base64", host)
			}
			user, pass, _ = strings.Cut(string(raw), ":")
		}
		host = strings.TrimPrefix(strings.TrimPrefix(host, "https://"), "http://")
		host, _, _ = strings.Cut(host, "/")
		kc[host] = authn.AuthConfig{Username: user, Password: pass}
	}
	return kc, nil
}
