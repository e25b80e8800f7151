package stackpkg

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// TestSplitCRDAndMatches: plural.group/version splits into its parts; a dependency
// matches a CRD of its group and version, of its plural or any with "*".
func TestSplitCRDAndMatches(t *testing.T) {
	split := map[string][]string{
		"widgets.alpha.io/v1":   {"widgets", "alpha.io", "v1"},
		"*.alpha.io/v1":         {"*", "alpha.io", "v1"},
		"widgets.a.b.c/v1beta1": {"widgets", "a.b.c", "v1beta1"},
		"widgets/v1":            nil,
		"widgets.alpha.io":      nil,
		"widgets.alpha.io/":     nil,
		".alpha.io/v1":          nil,
		"":                      nil,
	}
	for in, want := range split {
		p, g, v, err := SplitCRD(in)
		if want == nil {
			if err == nil {
				t.Errorf("SplitCRD(%q) = %s %s %s, want an error", in, p, g, v)
			}
			continue
		}
		if diff := cmp.Diff(want, []string{p, g, v}); diff != "" || err != nil {
			t.Errorf("SplitCRD(%q): %v (-want +got):\n%s", in, err, diff)
		}
	}
	for _, tc := range []struct {
		dep, crd string
		want     bool
	}{
		{"widgets.alpha.io/v1", "widgets.alpha.io/v1", true},
		{"*.alpha.io/v1", "widgets.alpha.io/v1", true},
		{"*.alpha.io/v1", "widgets.alpha.io/v2", false},
		{"*.alpha.io/v1", "widgets.beta.io/v1", false},
		{"gadgets.alpha.io/v1", "widgets.alpha.io/v1", false},
		{"widgets.alpha.io/v1", "*.alpha.io/v1", false}, // a wildcard owns nothing
		{"nonsense", "widgets.alpha.io/v1", false},
		{"widgets.alpha.io/v1", "nonsense", false},
	} {
		if got := Matches(tc.dep, tc.crd); got != tc.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", tc.dep, tc.crd, got, tc.want)
		}
	}
}

// TestLookup: the lexically first repository that owns the CRD wins; none is ErrNotFound.
func TestLookup(t *testing.T) {
	ix := &Index{Packages: map[string]IndexEntry{
		"z/widgets": {Package: "z/widgets:v9", Owns: []string{"widgets.alpha.io/v1"}},
		"a/widgets": {Package: "a/widgets:v1", Owns: []string{"gadgets.alpha.io/v1", "widgets.alpha.io/v1"}},
		"b/things":  {Package: "b/things:v2", Owns: []string{"things.beta.io/v1", "things.beta.io/v2"}},
	}}
	cases := map[string]string{
		"widgets.alpha.io/v1": "a/widgets:v1",
		"*.alpha.io/v1":       "a/widgets:v1",
		"things.beta.io/v2":   "b/things:v2",
		"things.beta.io/v3":   "",
		"*.gamma.io/v1":       "",
	}
	for crd, want := range cases {
		e, err := ix.Lookup(crd)
		if want == "" {
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("Lookup(%q) = %+v, %v; want ErrNotFound", crd, e, err)
			}
			continue
		}
		if err != nil || e.Package != want {
			t.Errorf("Lookup(%q) = %+v, %v; want %s", crd, e, err, want)
		}
	}
}

// TestIndexTag: one stable tag per repository, valid as an OCI tag.
func TestIndexTag(t *testing.T) {
	tag := regexp.MustCompile(`^r-[0-9a-f]{24}$`)
	a, b := indexTag("stacks/a"), indexTag("stacks/b")
	if !tag.MatchString(a) || a == b || a != indexTag("stacks/a") {
		t.Errorf("indexTag: %q, %q", a, b)
	}
}

// TestReadDirLimits: a package directory over any limit is refused as unsafe; one
// without .registry/ is refused; one within them is read with its sizes.
func TestReadDirLimits(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{"app.yaml": 10, "resources/a.crd.yaml": 20, "resources/b.crd.yaml": 30} {
		p := filepath.Join(dir, Root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]struct {
		lim    Limits
		unsafe bool
	}{
		"within":          {Limits{MaxFiles: 3, MaxFileBytes: 30, MaxTotalBytes: 60}, false},
		"too many files":  {Limits{MaxFiles: 2, MaxFileBytes: 30, MaxTotalBytes: 60}, true},
		"a file too big":  {Limits{MaxFiles: 3, MaxFileBytes: 29, MaxTotalBytes: 60}, true},
		"too much in all": {Limits{MaxFiles: 3, MaxFileBytes: 30, MaxTotalBytes: 59}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			files, err := ReadDir(dir, tc.lim)
			if tc.unsafe {
				if !errors.Is(err, ErrUnsafe) {
					t.Fatalf("ReadDir = %v, want ErrUnsafe", err)
				}
				return
			}
			want := []string{".registry/app.yaml", ".registry/resources/a.crd.yaml", ".registry/resources/b.crd.yaml"}
			if err != nil || files.Size() != 60 || !cmp.Equal(want, files.Names()) {
				t.Fatalf("ReadDir = %v (%d bytes), %v; want %v, 60 bytes", files.Names(), files.Size(), err, want)
			}
		})
	}
	if _, err := ReadDir(t.TempDir(), DefaultLimits); err == nil || !strings.Contains(err.Error(), "has no .registry/") {
		t.Errorf("no .registry/: %v", err)
	}
}

// TestParseTerraform: modules are read by name and file; classes from multi-document
// files, empty documents skipped; a class of a group the package's ClaimDefinition
// defines is allowed.
func TestParseTerraform(t *testing.T) {
	files := Files{
		".registry/app.yaml":                         []byte("title: T\nversion: 1.0.0"),
		".registry/terraform/modules/net/main.tf":    []byte("variable \"cidr\" {}"),
		".registry/terraform/modules/net/outputs.tf": []byte("output \"id\" {}"),
		".registry/terraform/modules/db-2/main.tf":   []byte("# db"),
		".registry/terraform/classes/defs.yaml": []byte("---\napiVersion: apiextensions.terraplane.io/v1alpha1\nkind: ClaimDefinition\nmetadata: {name: networks.platform.example.org}\nspec: {group: platform.example.org}\n---\n---\n" +
			"apiVersion: platform.example.org/v1alpha1\nkind: NetworkClass\nmetadata: {name: small}\n"),
		".registry/terraform/classes/readme.txt": []byte("not yaml, not read"),
	}
	p, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	wantModules := map[string]map[string]string{
		"net":  {"main.tf": "variable \"cidr\" {}", "outputs.tf": "output \"id\" {}"},
		"db-2": {"main.tf": "# db"},
	}
	if diff := cmp.Diff(wantModules, p.Modules); diff != "" {
		t.Errorf("modules (-want +got):\n%s", diff)
	}
	var kinds []string
	for _, o := range p.Objects {
		kinds = append(kinds, o.GetKind()+"/"+o.GetName())
	}
	if diff := cmp.Diff([]string{"ClaimDefinition/networks.platform.example.org", "NetworkClass/small"}, kinds); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if p.App.PermissionScope != "Namespaced" || p.Install != nil || len(p.Owned()) != 0 || len(p.DependsOn()) != 0 {
		t.Errorf("defaults: scope %q, install %v, owned %v, dependsOn %v", p.App.PermissionScope, p.Install, p.Owned(), p.DependsOn())
	}
	for _, bad := range []string{".registry/terraform/modules/Net/main.tf", ".registry/terraform/modules/net/ma in.tf", ".registry/terraform/modules/-x/main.tf"} {
		if _, err := Parse(Files{".registry/app.yaml": nil, bad: nil}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", bad, err)
		}
	}
}

// TestBuildAndDescribe: the image's manifest carries what the package owns and needs,
// its title and version; Describe summarises a pulled package.
func TestBuildAndDescribe(t *testing.T) {
	files := readSample(t, "beta")
	img, p, err := Build(files)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		ManifestOwns: strings.Join(p.Owned(), ","), ManifestDependsOn: strings.Join(p.DependsOn(), ","),
		ManifestTitle: p.App.Title, ManifestVersion: p.App.Version,
	}
	if diff := cmp.Diff(want, m.Annotations); diff != "" || len(m.Layers) != 1 || m.Annotations[ManifestOwns] == "" {
		t.Errorf("manifest: %d layers; annotations (-want +got):\n%s", len(m.Layers), diff)
	}
	if _, _, err := Build(Files{".registry/install.yaml": nil}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a broken package must not build: %v", err)
	}
	out, err := Describe(&Pulled{Package: p, Files: files, Digest: "sha256:abc"})
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Digest     string   `json:"digest"`
		Owns       []string `json:"owns"`
		Files      []string `json:"files"`
		Controller bool     `json:"controller"`
	}
	if err := json.Unmarshal(out, &d); err != nil || d.Digest != "sha256:abc" || !cmp.Equal(d.Owns, p.Owned()) || !cmp.Equal(d.Files, files.Names()) || d.Controller != (p.Install != nil) {
		t.Errorf("Describe = %s, %v", out, err)
	}
}

// TestPullRefusesShapes: an image of other than one layer is refused before its content
// is read; an index entry stored under another repository's tag is ignored.
func TestPullRefusesShapes(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	two, err := mutate.AppendLayers(empty.Image, static.NewLayer([]byte("a"), types.OCIUncompressedLayer), static.NewLayer([]byte("b"), types.OCIUncompressedLayer))
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := Ref(host, "stacks/two:v1")
	if err := Push(ctx, ref, two); err != nil {
		t.Fatal(err)
	}
	if _, err := Pull(ctx, ref, DefaultLimits); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "has 2 layers") {
		t.Errorf("two layers: %v, want ErrUnsafe", err)
	}
	missing, _ := Ref(host, "stacks/missing:v1")
	if _, err := Pull(ctx, missing, DefaultLimits); err == nil {
		t.Error("a missing package: want an error")
	}
	// an entry claiming a repository its tag is not for (a forged or stale entry)
	forged := IndexEntry{Repository: "stacks/victim", Package: "stacks/evil:v1", Owns: []string{"widgets.alpha.io/v1"}}
	b, _ := json.Marshal(forged)
	img, err := mutate.AppendLayers(empty.Image, static.NewLayer(b, IndexMediaType))
	if err != nil {
		t.Fatal(err)
	}
	repo, err := indexRepo(host)
	if err != nil {
		t.Fatal(err)
	}
	if err := Push(ctx, repo.Tag(indexTag("stacks/evil")), img); err != nil {
		t.Fatal(err)
	}
	if err := Push(ctx, repo.Tag("latest"), img); err != nil {
		t.Fatal(err)
	}
	ix, err := LoadIndex(ctx, host)
	if err != nil || len(ix.Packages) != 0 {
		t.Errorf("LoadIndex = %v, %v; want the forged and the untagged entry ignored", ix.Packages, err)
	}
	if err := PushIndexEntry(ctx, host, IndexEntry{Repository: "stacks/good", Package: "stacks/good:v1", Owns: []string{"goods.g.io/v1"}}); err != nil {
		t.Fatal(err)
	}
	if ix, err := LoadIndex(ctx, host); err != nil || len(ix.Packages) != 1 || ix.Packages["stacks/good"].Package != "stacks/good:v1" {
		t.Errorf("LoadIndex after a proper push = %v, %v", ix.Packages, err)
	}
}

// TestRegistryOf: the registry host of a reference, Docker Hub when it names none.
func TestRegistryOf(t *testing.T) {
	for in, want := range map[string]string{"reg.example:5000/stacks/a:v1": "reg.example:5000", "localhost/a:v1": "localhost", "stacks/a:v1": "index.docker.io"} {
		if got, err := RegistryOf(in); err != nil || got != want {
			t.Errorf("RegistryOf(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := RegistryOf("Not A Reference"); err == nil {
		t.Error("a bad reference: want an error")
	}
}
