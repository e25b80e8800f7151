package image

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// TestWriteEntries: entries come out sorted, each parent directory once and before its
// children, a directory entry keeps its own mode, and a file is read through a symlink.
func TestWriteEntries(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real")
	if err := os.WriteFile(target, []byte("content"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		entries []entry
		want    []string // type name mode size
	}{
		"parents once, sorted": {
			[]entry{{Path: "/a/b/y", Mode: 0o644, Data: []byte("yy")}, {Path: "/a/b/x", Mode: 0o755, Data: []byte("x")}},
			[]string{"dir a/ 755 0", "dir a/b/ 755 0", "reg a/b/x 755 1", "reg a/b/y 644 2"},
		},
		"a directory entry after its implied parent": {
			[]entry{{Path: "/tmp", Mode: 0o1777, Dir: true}, {Path: "/opt/x/y", Mode: 0o755, Dir: true}, {Path: "/opt/x", Mode: 0o700, Dir: true}},
			[]string{"dir opt/ 755 0", "dir opt/x/ 700 0", "dir opt/x/y/ 755 0", "dir tmp/ 1777 0"},
		},
		"a directory listed after its children sorts first, with its mode": {
			[]entry{{Path: "/d/f", Mode: 0o644, Data: []byte("f")}, {Path: "/d", Mode: 0o700, Dir: true}},
			[]string{"dir d/ 700 0", "reg d/f 644 1"},
		},
		"a directory listed twice is written once": {
			[]entry{{Path: "/d", Mode: 0o700, Dir: true}, {Path: "/d", Mode: 0o700, Dir: true}},
			[]string{"dir d/ 700 0"},
		},
		"a file through a symlink": {
			[]entry{{Path: "/bin/tool", Mode: 0o755, File: link}},
			[]string{"dir bin/ 755 0", "reg bin/tool 755 7"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			if err := writeEntries(tw, tc.entries); err != nil {
				t.Fatal(err)
			}
			if err := tw.Close(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tarListing(t, &buf)); diff != "" {
				t.Errorf("tar (-want +got):\n%s", diff)
			}
		})
	}
	if err := writeEntries(tar.NewWriter(io.Discard), []entry{{Path: "/x", File: filepath.Join(dir, "missing")}}); err == nil {
		t.Error("a missing host file: want an error")
	}
}

// tarListing lists a tar's headers as "type name mode size", checking the fixed time and owner.
func tarListing(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if !hdr.ModTime.Equal(epoch) {
			t.Errorf("%s has time %v, want the epoch", hdr.Name, hdr.ModTime)
		}
		kind := map[byte]string{tar.TypeDir: "dir", tar.TypeReg: "reg"}[hdr.Typeflag]
		out = append(out, strings.Join([]string{kind, hdr.Name, strconv.FormatInt(hdr.Mode, 8), strconv.FormatInt(hdr.Size, 10)}, " "))
	}
}

// TestWriteLayerIsReproducible: the same entries give the same layer digest.
func TestWriteLayerIsReproducible(t *testing.T) {
	entries := func() []entry { return baseEntries(writeTemp(t, "pem")) }
	a, err := writeLayer(t.TempDir(), "base", entries())
	if err != nil {
		t.Fatal(err)
	}
	b, err := writeLayer(t.TempDir(), "base", entries())
	if err != nil {
		t.Fatal(err)
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Errorf("digests differ: %s, %s", da, db)
	}
}

// TestProviderEntries: only the named types, of the given host's tree, for the platform.
func TestProviderEntries(t *testing.T) {
	mirror := t.TempDir()
	for _, rel := range []string{
		"registry.terraform.io/hashicorp/aws/5.0.0/linux_amd64/terraform-provider-aws_v5.0.0",
		"registry.terraform.io/hashicorp/aws/5.0.0/darwin_arm64/terraform-provider-aws_v5.0.0",
		"registry.terraform.io/hashicorp/random/3.0.0/linux_amd64/terraform-provider-random_v3.0.0",
		"registry.opentofu.org/hashicorp/aws/5.0.0/linux_amd64/terraform-provider-aws_v5.0.0",
		"registry.opentofu.org/hashicorp/aws/5.0.0/linux_arm64/terraform-provider-aws_v5.0.0",
	} {
		writeAt(t, filepath.Join(mirror, rel), "p")
	}
	cases := map[string]struct {
		host, platform string
		types          []string
		want           []string
		wantErr        string
	}{
		"one type":          {"registry.terraform.io", "linux_amd64", []string{"aws"}, []string{Mirror + "/registry.terraform.io/hashicorp/aws/5.0.0/linux_amd64/terraform-provider-aws_v5.0.0"}, ""},
		"spaces trimmed":    {"registry.terraform.io", "linux_amd64", []string{" random "}, []string{Mirror + "/registry.terraform.io/hashicorp/random/3.0.0/linux_amd64/terraform-provider-random_v3.0.0"}, ""},
		"the tofu tree":     {"registry.opentofu.org", "linux_amd64", []string{"aws"}, []string{Mirror + "/registry.opentofu.org/hashicorp/aws/5.0.0/linux_amd64/terraform-provider-aws_v5.0.0"}, ""},
		"arm64":             {"registry.opentofu.org", "linux_arm64", []string{"aws"}, []string{Mirror + "/registry.opentofu.org/hashicorp/aws/5.0.0/linux_arm64/terraform-provider-aws_v5.0.0"}, ""},
		"missing in tree":   {"registry.opentofu.org", "linux_amd64", []string{"aws", "random"}, nil, `provider "random" for linux_amd64 is not in the mirror`},
		"missing for arm64": {"registry.terraform.io", "linux_arm64", []string{"aws"}, nil, `provider "aws" for linux_arm64 is not in the mirror`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := providerEntries(mirror, tc.host, tc.platform, tc.types)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, e := range got {
				paths = append(paths, e.Path)
				if e.Mode != 0o755 || e.File == "" {
					t.Errorf("%s: mode %o file %q", e.Path, e.Mode, e.File)
				}
			}
			if diff := cmp.Diff(tc.want, paths); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLayoutAndReferenceErrors: a layout with other than one image, and a reference that
// does not parse, are refused.
func TestLayoutAndReferenceErrors(t *testing.T) {
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FromLayout(dir); err == nil || !strings.Contains(err.Error(), "holds 0 images") {
		t.Errorf("empty layout: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := p.AppendImage(empty.Image); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := FromLayout(dir); err == nil || !strings.Contains(err.Error(), "holds 2 images") {
		t.Errorf("two images: %v", err)
	}
	if _, err := FromLayout(filepath.Join(dir, "absent")); err == nil {
		t.Error("no layout: want an error")
	}
	if err := WriteTarball(empty.Image, filepath.Join(dir, "x.tar"), "Not A Reference"); err == nil {
		t.Error("a bad reference: want an error")
	}
	if err := Push(empty.Image, "Not A Reference"); err == nil {
		t.Error("a bad reference: want an error")
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	writeAt(t, p, content)
	return p
}

func writeAt(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}
