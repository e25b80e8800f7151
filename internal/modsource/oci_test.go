package modsource

import (
	"archive/tar"
	"bytes"
	"strings"
	"testing"
)

func tarOf(t *testing.T, entries ...tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, h := range entries {
		body := []byte("x")
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := w.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			_, _ = w.Write(body)
		}
	}
	_ = w.Close()
	return buf.Bytes()
}

func TestUntarRefusesUnsafeArchives(t *testing.T) {
	files, err := untar(bytes.NewReader(tarOf(t, tar.Header{Name: "./mod/main.tf", Typeflag: tar.TypeReg, Mode: 0o644})))
	if err != nil || string(files["mod/main.tf"]) != "x" {
		t.Fatalf("a plain file: %v %v", files, err)
	}
	cases := map[string]tar.Header{
		"symlink":   {Name: "main.tf", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
		"hardlink":  {Name: "main.tf", Typeflag: tar.TypeLink, Linkname: "other"},
		"traversal": {Name: "../../etc/cron.d/x", Typeflag: tar.TypeReg, Mode: 0o644},
		"absolute":  {Name: "/etc/x", Typeflag: tar.TypeReg, Mode: 0o644},
	}
	for name, h := range cases {
		if _, err := untar(bytes.NewReader(tarOf(t, h))); err == nil || !strings.Contains(err.Error(), "module artifact") {
			t.Errorf("%s: got %v, want a refusal", name, err)
		}
	}
}
