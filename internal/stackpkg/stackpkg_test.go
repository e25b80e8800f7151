package stackpkg

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"terraplane.io/terraplane/internal/archive"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
)

const samples = "../../test/e2e/testdata/stacks"

func readSample(t *testing.T, name string) Files {
	t.Helper()
	f, err := ReadDir(filepath.Join(samples, name), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestParseAnnotatesCRDs(t *testing.T) {
	p, err := Parse(readSample(t, "alpha"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"sprockets.alpha.example.org/v1alpha1", "widgets.alpha.example.org/v1alpha1"}, p.Owned()); diff != "" {
		t.Errorf("owned (-want +got):\n%s", diff)
	}
	if p.App.PermissionScope != stacksv1.PermissionScopeCluster || p.Install == nil || p.Install.Name != "alpha-controller" {
		t.Errorf("app/install not read: %+v %+v", p.App.PermissionScope, p.Install)
	}
	if len(p.App.Icons) != 1 || p.App.Icons[0].MediaType != "image/svg+xml" {
		t.Errorf("icon.svg must win over icon.gif: %+v", p.App.Icons)
	}
	svg, _ := os.ReadFile(filepath.Join(samples, "alpha/.registry/resources/alpha/widget.icon.svg"))
	want := map[string]string{
		AnnotationStackTitle:          "Alpha Widgets",
		AnnotationGroupTitle:          "Alpha Group",
		AnnotationGroupOverview:       "Everything alpha.",
		AnnotationGroupOverviewShort:  "The alpha group.",
		AnnotationGroupReadme:         "# Alpha group",
		AnnotationResourceCategory:    "Application",
		AnnotationResourceTitle:       "Widget",
		AnnotationResourceTitlePlural: "Widgets",
		AnnotationResourceOverview:    "A widget is small.",
		AnnotationResourceOverviewSh:  "A widget.",
		AnnotationResourceReadme:      "# Widget",
		AnnotationIconDataURI:         "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(svg),
		AnnotationUISchema:            "configSections:\n- title: Common\n\n---\nconfigSections:\n- title: Widget",
	}
	var widget, sprocket map[string]string
	for _, c := range p.CRDs {
		switch c.Spec.Names.Kind {
		case "Widget":
			widget = c.Annotations
		case "Sprocket":
			sprocket = c.Annotations
		}
	}
	if diff := cmp.Diff(want, widget); diff != "" {
		t.Errorf("widget annotations (-want +got):\n%s", diff)
	}
	if sprocket[AnnotationResourceTitle] != "" || sprocket[AnnotationIconDataURI] != "" || sprocket[AnnotationGroupTitle] != "Alpha Group" {
		t.Errorf("sprocket gets the group's annotations only: %v", sprocket)
	}
}

func TestParseRefuses(t *testing.T) {
	cases := map[string]struct {
		files Files
		want  string
	}{
		"no app.yaml": {Files{".registry/install.yaml": nil}, "app.yaml is missing"},
		"bad scope":   {Files{".registry/app.yaml": []byte("permissionScope: Everything")}, "neither Cluster nor Namespaced"},
		"crd named wrong": {Files{".registry/app.yaml": nil, ".registry/resources/x.crd.yaml": []byte(
			"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b.c}\nspec: {group: b.c, names: {plural: z, kind: Z}, versions: [{name: v1}]}")}, `must be named "z.b.c"`},
		"reserved group": {Files{".registry/app.yaml": nil, ".registry/resources/x.crd.yaml": []byte(
			"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: buckets.storage.terraplane.io}\nspec: {group: storage.terraplane.io, names: {plural: buckets, kind: Bucket}, versions: [{name: v1}]}")}, "reserved group"},
		"bad dependsOn":              {Files{".registry/app.yaml": []byte("dependsOn: [{crd: widgets}]")}, `dependsOn: "widgets" is not plural.group/version`},
		"dependsOn terraform":        {Files{".registry/app.yaml": []byte("dependsOn: [{crd: modules.terraform.terraplane.io/v1alpha1}]")}, "reserved group"},
		"dependsOn all of terraform": {Files{".registry/app.yaml": []byte("dependsOn: [{crd: '*.terraform.terraplane.io/v1alpha1'}]")}, "reserved group"},
		"dependsOn rbac":             {Files{".registry/app.yaml": []byte("dependsOn: [{crd: '*.rbac.authorization.k8s.io/v1'}]")}, "reserved group"},
		"dependsOn apps":             {Files{".registry/app.yaml": []byte("dependsOn: [{crd: deployments.apps/v1}]")}, "reserved group"},
		"not a crd":                  {Files{".registry/app.yaml": nil, ".registry/resources/x.crd.yaml": []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: s}")}, "is not an apiextensions.k8s.io/v1"},
		"a pod in classes":           {Files{".registry/app.yaml": nil, ".registry/terraform/classes/c.yaml": []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}")}, "may not be shipped"},
		"a role in classes":          {Files{".registry/app.yaml": nil, ".registry/terraform/classes/c.yaml": []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: p}")}, "may not be shipped"},
		"nested module":              {Files{".registry/app.yaml": nil, ".registry/terraform/modules/m/sub/main.tf": nil}, "flat directories"},
		"install not deployment":     {Files{".registry/app.yaml": nil, ".registry/install.yaml": []byte("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}")}, "one apps/v1 Deployment"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(tc.files)
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an ErrInvalid containing %q", err, tc.want)
			}
		})
	}
}

// tarOf writes regular files as they are named, the unsafe names too (archive.Write
// checks nothing); the entries a reader must refuse for their type are tested in
// internal/archive.
func tarOf(t *testing.T, files Files) []byte {
	t.Helper()
	raw, err := archive.Write(files)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// The archive rules themselves are tested in internal/archive; a package adds one.
func TestReadTarRefusesFilesOutsideRoot(t *testing.T) {
	for name, files := range map[string]Files{
		"outside root":  {"app.yaml": []byte("x")},
		"beside root":   {".registry/app.yaml": []byte("x"), ".registryx/a": []byte("x")},
		"archive rules": {".registry/../../etc/passwd": []byte("x")},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ReadTar(bytes.NewReader(tarOf(t, files)), DefaultLimits); !errors.Is(err, ErrUnsafe) {
				t.Fatalf("got %v, want ErrUnsafe", err)
			}
		})
	}
	files, err := ReadTar(bytes.NewReader(tarOf(t, Files{".registry/a": make([]byte, 100), "./.registry/b": make([]byte, 50)})), DefaultLimits)
	if err != nil || len(files[".registry/a"]) != 100 || len(files[".registry/b"]) != 50 {
		t.Fatalf("a package under .registry/ must be read: %v", err)
	}
}

func TestParseRefusesPrivilegedControllers(t *testing.T) {
	head := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: c}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n"
	for name, pod := range map[string]string{
		"host network":    "      hostNetwork: true\n      containers: [{name: c, image: i}]\n",
		"host path":       "      containers: [{name: c, image: i}]\n      volumes: [{name: root, hostPath: {path: /}}]\n",
		"privileged":      "      containers: [{name: c, image: i, securityContext: {privileged: true}}]\n",
		"init escalation": "      initContainers: [{name: i, image: i, securityContext: {allowPrivilegeEscalation: true}}]\n      containers: [{name: c, image: i}]\n",
		"capabilities":    "      containers: [{name: c, image: i, securityContext: {capabilities: {add: [SYS_ADMIN]}}}]\n",
		"own account":     "      serviceAccountName: cluster-admin-sa\n      containers: [{name: c, image: i}]\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(Files{".registry/app.yaml": nil, ".registry/install.yaml": []byte(head + pod)})
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "install.yaml asks for") {
				t.Fatalf("got %v, want ErrUnsafe", err)
			}
		})
	}
	if _, err := Parse(Files{".registry/app.yaml": nil, ".registry/install.yaml": []byte(head + "      containers: [{name: c, image: i, securityContext: {runAsNonRoot: true}}]\n")}); err != nil {
		t.Fatalf("a plain controller is fine: %v", err)
	}
}

func TestReadDirRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, Root), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, Root, "app.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDir(dir, DefaultLimits); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("got %v, want ErrUnsafe", err)
	}
}

func TestPublishPullAndIndex(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	ix, err := LoadIndex(ctx, host)
	if err != nil || len(ix.Packages) != 0 {
		t.Fatalf("a registry without an index has an empty one: %v %v", ix, err)
	}
	for _, s := range []struct{ dir, pkg string }{{"gamma", "stacks/gamma:v1"}, {"beta", "stacks/beta:v1"}, {"gamma-v2", "stacks/gamma:v2"}} {
		if _, err := Publish(ctx, host, s.pkg, readSample(t, s.dir)); err != nil {
			t.Fatal(err)
		}
	}
	ix, err = LoadIndex(ctx, host)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ix.Lookup("*.gamma.example.org/v1alpha1")
	if err != nil || got.Package != "stacks/gamma:v2" {
		t.Errorf("wildcard lookup gives the latest tag: %+v %v", got, err)
	}
	if got, err := ix.Lookup("gadgets.beta.example.org/v1alpha1"); err != nil || got.Package != "stacks/beta:v1" || got.DependsOn[0] != "*.gamma.example.org/v1alpha1" {
		t.Errorf("lookup by CRD: %+v %v", got, err)
	}
	if _, err := ix.Lookup("ghosts.nowhere.example.org/v1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown CRD: %v", err)
	}

	ref, err := Ref(host, "stacks/gamma:v2")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Pull(ctx, ref, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if p.App.Version != "2.0.0" || len(p.CRDs[0].Spec.Versions) != 2 || p.Digest != got.Digest {
		t.Errorf("pulled package: %+v digest %s want %s", p.App, p.Digest, got.Digest)
	}
	if _, err := Pull(ctx, ref, Limits{MaxFiles: 10, MaxFileBytes: 10, MaxTotalBytes: 10}); !errors.Is(err, ErrUnsafe) {
		t.Errorf("a package over the size cap is refused before download: %v", err)
	}

	// A hand-made image whose layer holds a path traversal is refused on pull.
	evil := tarOf(t, Files{".registry/app.yaml": []byte("x"), ".registry/../../../tmp/owned": []byte("x")})
	img, err := mutate.AppendLayers(empty.Image, static.NewLayer(evil, types.OCIUncompressedLayer))
	if err != nil {
		t.Fatal(err)
	}
	evilRef, _ := Ref(host, "stacks/evil:v1")
	if err := Push(ctx, evilRef, img); err != nil {
		t.Fatal(err)
	}
	if _, err := Pull(ctx, evilRef, DefaultLimits); !errors.Is(err, ErrUnsafe) {
		t.Errorf("path traversal must be refused: %v", err)
	}
}

func TestConcurrentPushesKeepEveryIndexEntry(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	files := readSample(t, "gamma")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := Publish(ctx, host, fmt.Sprintf("team%d/gamma:v1", i), files)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	ix, err := LoadIndex(ctx, host)
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Packages) != 8 {
		t.Fatalf("index has %d entries, want 8: %v", len(ix.Packages), ix.Packages)
	}
	if e, err := ix.Lookup("things.gamma.example.org/v1alpha1"); err != nil || e.Package != "team0/gamma:v1" {
		t.Errorf("lookup prefers the first repository: %+v %v", e, err)
	}
}

func TestRef(t *testing.T) {
	for in, want := range map[string]string{
		"stacks/a:v1":               "reg.example:5000/stacks/a:v1",
		"127.0.0.1:9/stacks/a:v1":   "127.0.0.1:9/stacks/a:v1",
		"localhost/stacks/a:v1":     "localhost/stacks/a:v1",
		"other.example/stacks/a:v1": "other.example/stacks/a:v1",
	} {
		r, err := Ref("reg.example:5000", in)
		if err != nil || r.String() != want {
			t.Errorf("Ref(%q) = %v, %v; want %s", in, r, err, want)
		}
	}
	for reg, scheme := range map[string]string{"http://reg.example.com:5000": "http", "https://reg.example.com:5000": "https", "reg.example.com:5000": "https", "127.0.0.1:5000": "http"} {
		r, err := Ref(reg, "stacks/a:v1")
		if err != nil || r.Context().Scheme() != scheme || r.Context().RegistryStr() != strings.SplitN(strings.TrimPrefix(strings.TrimPrefix(reg, "http://"), "https://"), "/", 2)[0] {
			t.Errorf("Ref(%q) = %v (scheme %s), %v; want scheme %s", reg, r, r.Context().Scheme(), err, scheme)
		}
	}
	if _, err := Ref("", "stacks/a:v1"); err == nil {
		t.Error("no registry at all must fail")
	}
}

func TestMatchesID(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", Singular: "widget", Plural: "widgets"}
	for id, want := range map[string]bool{"widget": true, "Widget": true, "WIDGETS": true, "sprocket": false, "widgets.alpha.example.org": false} {
		if got := matchesID(id, crd); got != want {
			t.Errorf("matchesID(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestReservedGroup: Terraplane's groups, Kubernetes' (k8s.io, kubernetes.io) and its
// built-in groups without a domain are reserved; anyone else's domain is not.
func TestReservedGroup(t *testing.T) {
	for group, want := range map[string]bool{
		"terraform.terraplane.io": true, "stacks.terraplane.io": true, "terraplane.io": true, "storage.terraplane.io": true,
		"rbac.authorization.k8s.io": true, "apiextensions.k8s.io": true, "admissionregistration.k8s.io": true,
		"coordination.k8s.io": true, "k8s.io": true, "metrics.kubernetes.io": true,
		"": true, "apps": true, "batch": true, "policy": true,
		"example.org": false, "gamma.example.org": false, "cluster.x-k8s.io": false, "terraplane.io.example.org": false,
		"notterraplane.io": false,
	} {
		if got := ReservedGroup(group); got != want {
			t.Errorf("ReservedGroup(%q) = %v, want %v", group, got, want)
		}
	}
}
