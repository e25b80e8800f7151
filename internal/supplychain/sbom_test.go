package supplychain

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"terraplane.io/terraplane/internal/image"
)

// testImage builds a real image (internal/image) whose terraplane is a Go binary of this
// module with dependencies (hack/registry, built here), with a stand-in tofu and the
// random provider in its mirror; it returns the image and the binary's build info.
func testImage(t *testing.T) (v1.Image, *buildinfo.BuildInfo) {
	t.Helper()
	dir := t.TempDir()
	self := filepath.Join(dir, "terraplane")
	build := exec.Command("go", "build", "-trimpath", "-o", self, "terraplane.io/terraplane/hack/registry")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bi, err := buildinfo.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"tofu/tofu": "tofu", "ca.crt": "pem",
		"mirror/registry.opentofu.org/hashicorp/random/3.9.0/linux_amd64/terraform-provider-random_v3.9.0_x5": "random",
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	img, err := image.Build(image.Options{
		Terraplane: self, Terraform: filepath.Join(dir, "tofu/tofu"), CACerts: filepath.Join(dir, "ca.crt"),
		ProviderMirror: filepath.Join(dir, "mirror"), Providers: []string{"random"}, Scratch: t.TempDir(), Version: "v1.2.3",
	})
	if err != nil {
		t.Fatal(err)
	}
	return img, bi
}

// TestSBOMFromImage reads what a built image bundles and checks its SPDX document: the
// image containing terraplane, tofu and the provider, and terraplane depending on the Go
// standard library and on every module of its build info.
func TestSBOMFromImage(t *testing.T) {
	img, self := testImage(t)
	c, err := ReadContents(img, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if len(self.Deps) == 0 {
		t.Fatal("the built binary's build info lists no modules")
	}
	if c.Terraplane.Build.GoVersion != runtime.Version() || len(c.Terraplane.Build.Deps) != len(self.Deps) {
		t.Fatalf("terraplane's build info: %s with %d modules, want %s with %d", c.Terraplane.Build.GoVersion,
			len(c.Terraplane.Build.Deps), runtime.Version(), len(self.Deps))
	}
	tofuSum := sha256.Sum256([]byte("tofu"))
	randomSum := sha256.Sum256([]byte("random"))
	wantProviders := []Provider{{Source: "registry.opentofu.org/hashicorp/random", Namespace: "hashicorp", Type: "random", Version: "3.9.0",
		Path: image.Mirror + "/registry.opentofu.org/hashicorp/random/3.9.0/linux_amd64/terraform-provider-random_v3.9.0_x5", SHA256: hex.EncodeToString(randomSum[:])}}
	if d := cmp.Diff(wantProviders, c.Providers); d != "" {
		t.Errorf("providers (-want +got):\n%s", d)
	}
	if c.Terraform.Name != "tofu" || c.Terraform.SHA256 != hex.EncodeToString(tofuSum[:]) || c.Platform != "linux/amd64" {
		t.Errorf("tofu %q %s on %s", c.Terraform.Name, c.Terraform.SHA256, c.Platform)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	doc := SBOM(c, ImageRef{Repository: "registry.example.com/platform/terraplane", Digest: digest.String()}, time.Unix(0, 0))
	checkSBOM(t, doc, self)
}

func checkSBOM(t *testing.T, doc Document, self *debug.BuildInfo) {
	t.Helper()
	byName := map[string]Package{}
	validID := regexp.MustCompile(`^SPDXRef-[A-Za-z0-9.-]+$`)
	seen := map[string]bool{}
	for _, p := range doc.Packages {
		byName[p.Name] = p
		if !validID.MatchString(p.SPDXID) || seen[p.SPDXID] {
			t.Errorf("SPDX ID %q is invalid or repeated", p.SPDXID)
		}
		seen[p.SPDXID] = true
	}
	type summary struct{ Version, Licence, Purpose string }
	got := map[string]summary{}
	for _, n := range []string{"registry.example.com/platform/terraplane", "terraplane", "tofu", "registry.opentofu.org/hashicorp/random", "stdlib", "github.com/google/go-containerregistry"} {
		p := byName[n]
		got[n] = summary{p.VersionInfo, p.LicenseDeclared, p.PrimaryPackagePurpose}
	}
	want := map[string]summary{
		"registry.example.com/platform/terraplane": {"v1.2.3", "Apache-2.0 AND MPL-2.0", "CONTAINER"},
		"terraplane":                             {"v1.2.3", "Apache-2.0", "APPLICATION"},
		"tofu":                                   {"NOASSERTION", "MPL-2.0", "APPLICATION"},
		"registry.opentofu.org/hashicorp/random": {"3.9.0", "MPL-2.0", "APPLICATION"},
		"stdlib":                                 {runtime.Version()[2:], "BSD-3-Clause", "LIBRARY"},
		"github.com/google/go-containerregistry": {moduleIn(self, "github.com/google/go-containerregistry"), "NOASSERTION", "LIBRARY"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("packages (-want +got):\n%s", d)
	}
	counts := map[string]int{}
	for _, r := range doc.Relationships {
		counts[r.RelationshipType]++
		if !seen[r.RelatedSPDXElement] || (!seen[r.SPDXElementID] && r.SPDXElementID != "SPDXRef-DOCUMENT") {
			t.Errorf("relationship %v names an element the document lacks", r)
		}
	}
	if d := cmp.Diff(map[string]int{"DESCRIBES": 1, "CONTAINS": 3, "DEPENDS_ON": len(self.Deps) + 1}, counts); d != "" {
		t.Errorf("relationships (-want +got):\n%s", d)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil || generic["spdxVersion"] != "SPDX-2.3" || generic["dataLicense"] != "CC0-1.0" {
		t.Errorf("SPDX JSON: %v %v", err, generic["spdxVersion"])
	}
}

func moduleIn(bi *debug.BuildInfo, path string) string {
	for _, d := range bi.Deps {
		if d.Path == path {
			return d.Version
		}
	}
	return ""
}

// TestModuleVersion reads the version of a Go binary's own module from its build info:
// the main module's, or the required module of a binary built from a tools module.
func TestModuleVersion(t *testing.T) {
	for name, tc := range map[string]struct {
		bi   *buildinfo.BuildInfo
		want string
	}{
		"main module with a version": {&buildinfo.BuildInfo{Path: "example.com/x/cmd/x", Main: debug.Module{Path: "example.com/x", Version: "v1.0.0"}}, "v1.0.0"},
		"built from a tools module": {&buildinfo.BuildInfo{Path: "github.com/opentofu/opentofu/cmd/tofu",
			Main: debug.Module{Path: "terraplane.io/hack/tools/tofu", Version: "(devel)"},
			Deps: []*debug.Module{{Path: "github.com/opentofu/opentofu-other", Version: "v9"}, {Path: "github.com/opentofu/opentofu", Version: "v1.10.10"}}}, "v1.10.10"},
		"devel, not told": {&buildinfo.BuildInfo{Path: "github.com/hashicorp/terraform", Main: debug.Module{Path: "github.com/hashicorp/terraform", Version: "(devel)"}}, ""},
		"no build info":   {nil, ""},
	} {
		t.Run(name, func(t *testing.T) {
			if got := moduleVersion(tc.bi); got != tc.want {
				t.Errorf("moduleVersion = %q, want %q", got, tc.want)
			}
		})
	}
}
