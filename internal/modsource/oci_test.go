package modsource

import (
	"context"
	"encoding/base64"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/archive"
)

// ociRegistry is one registry in process served twice: open (at open) and asking for
// user "u" with password "p" (at guarded).
type ociRegistry struct{ open, guarded string }

func newOCIRegistry(t *testing.T) ociRegistry {
	t.Helper()
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	open := httptest.NewServer(h)
	guarded := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "u" || p != "p" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(open.Close)
	t.Cleanup(guarded.Close)
	return ociRegistry{strings.TrimPrefix(open.URL, "http://"), strings.TrimPrefix(guarded.URL, "http://")}
}

// push stores an artifact of one layer per file set at ref (on the open server) and
// returns its digest.
func (r ociRegistry) push(t *testing.T, ref string, layers ...map[string][]byte) string {
	t.Helper()
	img := empty.Image
	for _, files := range layers {
		tar, err := archive.Write(files)
		if err != nil {
			t.Fatal(err)
		}
		if img, err = mutate.AppendLayers(img, static.NewLayer(tar, types.OCIUncompressedLayer)); err != nil {
			t.Fatal(err)
		}
	}
	parsed, err := name.ParseReference(r.open + "/" + ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(parsed, img); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	return d.String()
}

// pullSecret is a docker-registry Secret for host.
func pullSecret(name, host, user, password string) *corev1.Secret {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"` + host + `":{"auth":"` + auth + `"}}}`)}}
}

// TestFromOCI: a tag is resolved to a digest and looked up again after the refresh
// interval, a digest is pinned, the module is read at its path, and every failure is a
// user error with its reason.
func TestFromOCI(t *testing.T) {
	ctx := context.Background()
	reg := newOCIRegistry(t)
	module := func(v string) map[string][]byte {
		return map[string][]byte{"main.tf": []byte(`variable "root" {}`), "modules/db/main.tf": []byte(`variable "` + v + `" {}`)}
	}
	first := reg.push(t, "mods/db:v1", module("first"))
	reg.push(t, "mods/two:v1", module("a"), module("b"))
	reg.push(t, "mods/docs:v1", map[string][]byte{"README.md": []byte("no module")})
	c := fake.NewClientBuilder().WithObjects(pullSecret("good", reg.guarded, "u", "p"), pullSecret("bad", reg.guarded, "u", "wrong"),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "opaque"}}).Build()
	l := &Loader{RefreshInterval: time.Hour}
	load := func(host, ref, path, secret string) (*Loaded, error) {
		src := terraformv1.OCISource{Ref: ref, Path: path}
		if host != "" {
			src.Ref = host + "/" + ref
		}
		if secret != "" {
			src.SecretRef = &common.LocalReference{Name: secret}
		}
		return l.LoadSource(ctx, c, "ns", terraformv1.ModuleSource{OCI: &src})
	}

	tagged, err := load(reg.open, "mods/db:v1", "modules/db", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tagged.Variable("first"); !ok || tagged.Revision != first || !tagged.Moving {
		t.Errorf("tag: %+v at %s (moving %v), want first at %s, moving", tagged.Variables, tagged.Revision, tagged.Moving, first)
	}
	pinned, err := load(reg.open, "mods/db@"+first, "/", "")
	if err != nil || pinned.Moving || pinned.Revision != first {
		t.Fatalf("digest: %+v, %v; want pinned at %s", pinned, err, first)
	}
	if _, ok := pinned.Variable("root"); !ok {
		t.Errorf("the artifact's root module: %+v", pinned.Variables)
	}
	second := reg.push(t, "mods/db:v1", module("second"))
	if again, _ := load(reg.open, "mods/db:v1", "modules/db", ""); again.Revision != first {
		t.Errorf("within the refresh interval the tag stays at %s, got %s", first, again.Revision)
	}
	l.RefreshInterval = time.Nanosecond
	if moved, _ := load(reg.open, "mods/db:v1", "modules/db", ""); moved == nil || moved.Revision != second {
		t.Errorf("after the refresh interval the tag moves to %s, got %+v", second, moved)
	}
	if withCreds, err := load(reg.guarded, "mods/db:v1", "modules/db", "good"); err != nil || withCreds.Revision != second {
		t.Errorf("with a pull secret: %+v, %v", withCreds, err)
	}

	for _, tc := range []struct {
		name, host, ref, path, secret string
		reason, msg                   string
	}{
		{"not a reference", "", "Not A Ref", "", "", ReasonInvalidSource, `OCI reference "Not A Ref"`},
		{"absent", reg.open, "mods/absent:v1", "", "", ReasonNotFound, "not in the registry"},
		{"two layers", reg.open, "mods/two:v1", "", "", ReasonInvalidModule, "must have exactly one layer"},
		{"no module at the path", reg.open, "mods/db:v1", "modules/none", "", ReasonInvalidModule, "module has no .tf or .tf.json files"},
		{"no module at all", reg.open, "mods/docs:v1", "", "", ReasonInvalidModule, "module in " + reg.open + "/mods/docs:v1//:"},
		{"credentials needed", reg.guarded, "mods/db:v1", "", "", ReasonAuthFailed, "name a pull secret in secretRef"},
		{"credentials refused", reg.guarded, "mods/db:v1", "", "bad", ReasonAuthFailed, "refused the credentials in pull secret ns/bad"},
		{"not a pull secret", reg.guarded, "mods/db:v1", "", "opaque", ReasonSecretInvalid, "pull secret ns/opaque"},
		{"no such secret", reg.guarded, "mods/db:v1", "", "absent", ReasonSecretNotFound, "Secret ns/absent"},
	} {
		_, err := load(tc.host, tc.ref, tc.path, tc.secret)
		if reason, msg := userError(t, err); reason != tc.reason || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: %s %q, want %s with %q", tc.name, reason, msg, tc.reason, tc.msg)
		}
	}

	limited := &Loader{AllowedSources: []string{"ghcr.io/acme"}}
	_, err = limited.LoadSource(ctx, c, "ns", terraformv1.ModuleSource{OCI: &terraformv1.OCISource{Ref: reg.open + "/mods/db:v1"}})
	if reason, _ := userError(t, err); reason != ReasonNotAllowed {
		t.Errorf("a registry the allow-list does not name: %v", err)
	}
}
