package registryauth

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
)

func dockerSecret(typ corev1.SecretType, key, config string) *corev1.Secret {
	return &corev1.Secret{Type: typ, Data: map[string][]byte{key: []byte(config)}}
}

func TestFromSecret(t *testing.T) {
	ctx := context.Background()
	kc, err := FromSecret(ctx, dockerSecret(corev1.SecretTypeDockerConfigJson, corev1.DockerConfigJsonKey,
		`{"auths": {"https://reg.example.com:5000/v1/": {"auth": "dXNlcjpwYXNz"}, "other.example.com": {"username": "u", "password": "p"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]authn.AuthConfig{"reg.example.com:5000": {Username: "user", Password: "pass"}, "other.example.com": {Username: "u", Password: "p"}} {
		reg, _ := name.NewRegistry(host)
		a, err := kc.Resolve(reg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.Authorization()
		if err != nil || got.Username != want.Username || got.Password != want.Password {
			t.Errorf("%s: got %+v %v, want %+v", host, got, err, want)
		}
	}
	reg, _ := name.NewRegistry("unknown.example.com")
	if a, _ := kc.Resolve(reg); a != authn.Anonymous {
		t.Errorf("unknown registries are anonymous, got %v", a)
	}
	legacy, err := FromSecret(ctx, dockerSecret(corev1.SecretTypeDockercfg, corev1.DockerConfigKey, `{"old.example.com": {"username": "o", "password": "q"}}`))
	if err != nil {
		t.Fatal(err)
	}
	old, _ := name.NewRegistry("old.example.com")
	if a, _ := legacy.Resolve(old); a == authn.Anonymous {
		t.Error("a .dockercfg secret must answer for its registry")
	}
}

func TestFromSecretRefusesWhatCannotHelp(t *testing.T) {
	for name, tc := range map[string]struct {
		secret *corev1.Secret
		want   string
	}{
		"opaque":   {&corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths": {"h": {}}}`)}}, "not a pull secret"},
		"no key":   {&corev1.Secret{Type: corev1.SecretTypeDockerConfigJson}, "missing or empty"},
		"no auths": {dockerSecret(corev1.SecretTypeDockerConfigJson, corev1.DockerConfigJsonKey, `{}`), "names no registry"},
		"not json": {dockerSecret(corev1.SecretTypeDockerConfigJson, corev1.DockerConfigJsonKey, `not json`), "not a docker config"},
		"bad auth": {dockerSecret(corev1.SecretTypeDockerConfigJson, corev1.DockerConfigJsonKey, `{"auths": {"h": {"auth": "%%%"}}}`), "not a docker config"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := FromSecret(context.Background(), tc.secret); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
