package registryauth

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"
	k8schain "github.com/google/go-containerregistry/pkg/authn/kubernetes"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Keychain reads the pull secret namespace/name and returns a keychain that answers with
// its credentials for the registries it names and with the controller's own docker
// keychain (~/.docker/config.json, credential helpers) for the others. A missing or
// malformed Secret is a user error naming it; its values never appear in the error.
func Keychain(ctx context.Context, c client.Reader, namespace, name string) (authn.Keychain, error) {
	s := &corev1.Secret{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return nil, resource.UserErrorf(common.ReasonPullSecretInvalid, "pull secret %s/%s does not exist", namespace, name)
	}
	if err != nil {
		return nil, fmt.Errorf("get pull secret %s/%s: %w", namespace, name, err)
	}
	kc, err := FromSecret(ctx, s)
	if err != nil {
		return nil, resource.UserErrorf(common.ReasonPullSecretInvalid, "pull secret %s/%s: %v", namespace, name, err)
	}
	return authn.NewMultiKeychain(kc, authn.DefaultKeychain), nil
}

// FromSecret is the keychain of one pull secret; registries it does not name are
// anonymous to it.
func FromSecret(ctx context.Context, s *corev1.Secret) (authn.Keychain, error) {
	key := map[corev1.SecretType]string{corev1.SecretTypeDockerConfigJson: corev1.DockerConfigJsonKey, corev1.SecretTypeDockercfg: corev1.DockerConfigKey}[s.Type]
	if key == "" {
		return nil, fmt.Errorf("type %q is not a pull secret; create it with kubectl create secret docker-registry (type %s)", s.Type, corev1.SecretTypeDockerConfigJson)
	}
	if len(s.Data[key]) == 0 {
		return nil, fmt.Errorf("key %s is missing or empty", key)
	}
	if err := checkAuths(s.Data[key], s.Type == corev1.SecretTypeDockercfg); err != nil {
		return nil, fmt.Errorf("key %s: %w", key, err)
	}
	kc, err := k8schain.NewFromPullSecrets(ctx, []corev1.Secret{*s})
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", key, err)
	}
	return kc, nil
}

// checkAuths refuses a docker config that names no registry, so that a pull secret that
// can never help is reported instead of silently pulling anonymously. The library does the
// parsing; this only looks at the shape.
func checkAuths(b []byte, legacy bool) error {
	var auths map[string]authn.AuthConfig
	if legacy {
		if err := json.Unmarshal(b, &auths); err != nil {
			return fmt.Errorf("not a docker config: %w", err)
		}
	} else {
		var cfg struct {
			Auths map[string]authn.AuthConfig `json:"auths"`
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			return fmt.Errorf("not a docker config: %w", err)
		}
		auths = cfg.Auths
	}
	if len(auths) == 0 {
		return fmt.Errorf("the docker config names no registry (no auths)")
	}
	return nil
}
