package stack

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

func TestParseDockerConfig(t *testing.T) {
	kc, err := parseDockerConfig([]byte(`{"auths": {"https://reg.example.com:5000/v1/": {"auth": "dXNlcjpwYXNz"}, "other.example.com": {"username": "u", "password": "p"}}}`))
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
	for _, bad := range []string{`{}`, `not json`, `{"auths": {"h": {"auth": "%%%"}}}`} {
		if _, err := parseDockerConfig([]byte(bad)); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}
