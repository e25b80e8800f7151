package stack

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/stackpkg"
)

// crdYAML is the CRD plural.group with version v1.
func crdYAML(plural, group string) []byte {
	return []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: " + plural + "." + group + "}\n" +
		"spec: {group: " + group + ", scope: Namespaced, names: {plural: " + plural + ", kind: K" + plural + "}, versions: [{name: v1, served: true, storage: true}]}\n")
}

// testRegistry serves, in process: stacks/plain:v1 (owns widgets.alpha.io/v1),
// stacks/wide:v1 (asks for Cluster scope), stacks/beta:v1 (owns gadgets.beta.io/v1),
// stacks/needs:v1 (depends on gadgets.beta.io/v1), stacks/lost:v1 (depends on a CRD
// nobody owns), stacks/broken:v1 (no app.yaml) and stacks/two:v1 (two layers). It
// returns the registry's host.
func testRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	ctx := context.Background()
	for pkg, files := range map[string]stackpkg.Files{
		"stacks/plain:v1": {".registry/app.yaml": []byte("title: Plain\nversion: 1.0.0"), ".registry/resources/w.crd.yaml": crdYAML("widgets", "alpha.io")},
		"stacks/wide:v1":  {".registry/app.yaml": []byte("title: Wide\npermissionScope: Cluster")},
		"stacks/beta:v1":  {".registry/app.yaml": []byte("title: Beta"), ".registry/resources/g.crd.yaml": crdYAML("gadgets", "beta.io")},
		"stacks/needs:v1": {".registry/app.yaml": []byte("title: Needs\ndependsOn: [{crd: gadgets.beta.io/v1}, {crd: sprockets.needs.io/v1}]"),
			".registry/resources/s.crd.yaml": crdYAML("sprockets", "needs.io")},
		"stacks/lost:v1": {".registry/app.yaml": []byte("title: Lost\ndependsOn: [{crd: ghosts.nowhere.io/v1}]")},
	} {
		if _, err := stackpkg.Publish(ctx, host, pkg, files); err != nil {
			t.Fatal(err)
		}
	}
	broken, err := stackpkg.WriteTar(stackpkg.Files{".registry/readme": []byte("no app.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	greedy, err := stackpkg.WriteTar(stackpkg.Files{".registry/app.yaml": []byte("title: Greedy\ndependsOn: [{crd: '*.terraform.terraplane.io/v1alpha1'}]")})
	if err != nil {
		t.Fatal(err)
	}
	for pkg, layers := range map[string][][]byte{"stacks/broken:v1": {broken}, "stacks/two:v1": {broken, broken}, "stacks/greedy:v1": {greedy}} {
		img := empty.Image
		for _, l := range layers {
			if img, err = mutate.AppendLayers(img, static.NewLayer(l, types.OCIUncompressedLayer)); err != nil {
				t.Fatal(err)
			}
		}
		ref, _ := stackpkg.Ref(host, pkg)
		if err := stackpkg.Push(ctx, ref, img); err != nil {
			t.Fatal(err)
		}
	}
	return host
}

// downRegistry is the host of a registry that does not answer.
func downRegistry() string {
	srv := httptest.NewServer(nil)
	srv.Close()
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestResolve: an install names its package directly or by a CRD the registry's index
// knows; one pinned to a digest stays there; each failure is a user error saying what.
func TestResolve(t *testing.T) {
	host, down := testRegistry(t), downRegistry()
	pinned := func(crd, resolved string, gen int64) *stacksv1.StackInstall {
		o := testInstall()
		o.Spec = stacksv1.StackInstallSpec{Source: down, CRD: crd}
		o.Status.ResolvedPackage = resolved
		o.Status.Conditions = []metav1.Condition{{Type: stacksv1.TypeResolved, Status: metav1.ConditionTrue, ObservedGeneration: gen}}
		return o
	}
	digest := host + "/stacks/plain@sha256:" + strings.Repeat("ab", 32)
	cases := map[string]struct {
		spec    stacksv1.StackInstallSpec
		obj     *stacksv1.StackInstall
		defReg  string
		wantRef string
		reason  string
	}{
		"a package from its source":       {spec: stacksv1.StackInstallSpec{Source: host, Package: "stacks/plain:v1"}, wantRef: host + "/stacks/plain:v1"},
		"a package from the default":      {spec: stacksv1.StackInstallSpec{Package: "stacks/plain:v1"}, defReg: host, wantRef: host + "/stacks/plain:v1"},
		"a package naming its host":       {spec: stacksv1.StackInstallSpec{Package: host + "/stacks/plain:v1"}, wantRef: host + "/stacks/plain:v1"},
		"a CRD the index knows":           {spec: stacksv1.StackInstallSpec{Source: host, CRD: "widgets.alpha.io/v1"}, wantRef: host + "/stacks/plain:v1"},
		"pinned to its digest":            {obj: pinned("widgets.alpha.io/v1", digest, 1), wantRef: digest},
		"pinned, but the spec changed":    {obj: pinned("widgets.alpha.io/v1", digest, 0), reason: stacksv1.ReasonRegistryUnavailable},
		"no registry at all":              {spec: stacksv1.StackInstallSpec{CRD: "widgets.alpha.io/v1"}, reason: stacksv1.ReasonNoRegistry},
		"a package without a host":        {spec: stacksv1.StackInstallSpec{Package: "stacks/plain:v1"}, reason: stacksv1.ReasonNoRegistry},
		"a CRD nobody owns":               {spec: stacksv1.StackInstallSpec{Source: host, CRD: "ghosts.nowhere.io/v1"}, reason: stacksv1.ReasonCRDNotFound},
		"a registry that does not answer": {spec: stacksv1.StackInstallSpec{Source: down, CRD: "widgets.alpha.io/v1"}, reason: stacksv1.ReasonRegistryUnavailable},
		"a package that does not parse":   {spec: stacksv1.StackInstallSpec{Source: host, Package: "Stacks/Plain::v1"}, reason: stacksv1.ReasonInvalidPackage},
		"a pull secret that is missing":   {spec: stacksv1.StackInstallSpec{Source: host, Package: "stacks/plain:v1", PullSecretName: "creds"}, reason: stacksv1.ReasonPullSecret},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := tc.obj
			if obj == nil {
				obj = testInstall()
				obj.Spec = tc.spec
			}
			r := installer(stackClient(), events.NewFakeRecorder(10))
			r.opts.DefaultRegistry = tc.defReg
			in := &install{obj: obj}
			err := r.resolve(context.Background(), in)
			if tc.reason != "" {
				if u, ok := resource.AsUserError(err); !ok || u.Reason != tc.reason {
					t.Fatalf("resolve = %v, want a %s user error", err, tc.reason)
				}
				return
			}
			if err != nil || in.ref == nil || in.ref.String() != tc.wantRef {
				t.Fatalf("resolve = %v, %v; want %s", in.ref, err, tc.wantRef)
			}
		})
	}
}

// TestUnpack: a pulled package is recorded by digest; a missing, broken, unsafe or
// too-powerful one is a user error of its own reason; the same digest is pulled once.
func TestUnpack(t *testing.T) {
	host, down := testRegistry(t), downRegistry()
	cases := map[string]struct {
		ref     string
		cluster bool
		reason  string
	}{
		"a package":                       {ref: host + "/stacks/plain:v1"},
		"cluster scope, cluster install":  {ref: host + "/stacks/wide:v1", cluster: true},
		"cluster scope, namespaced":       {ref: host + "/stacks/wide:v1", reason: stacksv1.ReasonScopeNotAllowed},
		"not in the registry":             {ref: host + "/stacks/absent:v1", reason: stacksv1.ReasonPackageNotFound},
		"no app.yaml":                     {ref: host + "/stacks/broken:v1", reason: stacksv1.ReasonInvalidPackage},
		"dependsOn a reserved group":      {ref: host + "/stacks/greedy:v1", cluster: true, reason: stacksv1.ReasonInvalidPackage},
		"two layers":                      {ref: host + "/stacks/two:v1", reason: stacksv1.ReasonUnsafePackage},
		"a registry that does not answer": {ref: down + "/stacks/plain:v1", reason: stacksv1.ReasonRegistryUnavailable},
	}
	cache := &packageCache{limits: stackpkg.DefaultLimits}
	for caseName, tc := range cases {
		t.Run(caseName, func(t *testing.T) {
			var obj installObject = testInstall()
			if tc.cluster {
				obj = &stacksv1.ClusterStackInstall{ObjectMeta: metav1.ObjectMeta{Name: "alpha"}}
			}
			r := installer(stackClient(), events.NewFakeRecorder(10))
			r.packages = cache
			ref, err := name.ParseReference(tc.ref, name.Insecure)
			if err != nil {
				t.Fatal(err)
			}
			in := &install{obj: obj, ref: ref}
			err = r.unpack(context.Background(), in)
			if tc.reason != "" {
				if u, ok := resource.AsUserError(err); !ok || u.Reason != tc.reason {
					t.Fatalf("unpack = %v, want a %s user error", err, tc.reason)
				}
				return
			}
			want := ref.Context().String() + "@" + in.pkg.Digest
			if err != nil || obj.GetInstallStatus().ResolvedPackage != want {
				t.Fatalf("unpack: %v, resolved %q, want %q", err, obj.GetInstallStatus().ResolvedPackage, want)
			}
			again, err := cache.pull(context.Background(), ref, nil)
			if err != nil || again != in.pkg {
				t.Errorf("a second pull of the same digest is not the cached package: %v", err)
			}
		})
	}
}
