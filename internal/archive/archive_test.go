package archive

import (
	"archive/tar"
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tarOf writes raw tar entries, including the malicious ones Write never makes.
func tarOf(t *testing.T, entries ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range entries {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(bytes.Repeat([]byte("x"), int(h.Size))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func reg(name string, size int64) *tar.Header {
	return &tar.Header{Name: name, Typeflag: tar.TypeReg, Size: size, Mode: 0o644}
}

func TestReadRefusesUnsafeArchives(t *testing.T) {
	lim := Limits{MaxFiles: 3, MaxFileBytes: 100, MaxTotalBytes: 150}
	cases := map[string][]*tar.Header{
		"traversal":      {reg("a/../../etc/passwd", 1)},
		"parent":         {reg("..", 1)},
		"absolute":       {reg("/etc/passwd", 1)},
		"backslash":      {reg(`a\..\..\x`, 1)},
		"symlink":        {{Name: "main.tf", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}},
		"hardlink":       {{Name: "main.tf", Typeflag: tar.TypeLink, Linkname: "other"}},
		"device":         {{Name: "dev", Typeflag: tar.TypeChar}},
		"fifo":           {{Name: "pipe", Typeflag: tar.TypeFifo}},
		"too many":       {reg("a", 1), reg("b", 1), reg("c", 1), reg("d", 1)},
		"file too big":   {reg("a", 101)},
		"total too big":  {reg("a", 80), reg("b", 80)},
		"duplicate":      {reg("a", 1), reg("./a", 1)},
		"link after reg": {reg("a", 1), {Name: "b", Typeflag: tar.TypeSymlink, Linkname: "a"}},
	}
	for name, entries := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tarOf(t, entries...)), lim)
			if !errors.Is(err, ErrUnsafe) {
				t.Fatalf("got %v, want ErrUnsafe", err)
			}
		})
	}
}

func TestReadAtTheLimits(t *testing.T) {
	lim := Limits{MaxFiles: 3, MaxFileBytes: 100, MaxTotalBytes: 150}
	raw := tarOf(t, &tar.Header{Name: "pax_global_header", Typeflag: tar.TypeXGlobalHeader, PAXRecords: map[string]string{"comment": "abc"}},
		&tar.Header{Name: "mod/", Typeflag: tar.TypeDir, Mode: 0o755}, reg("mod/a", 100), reg("./mod/sub/b", 50))
	files, err := Read(bytes.NewReader(raw), lim)
	if err != nil {
		t.Fatalf("an archive at the limits must be read: %v", err)
	}
	if len(files) != 2 || len(files["mod/a"]) != 100 || len(files["mod/sub/b"]) != 50 {
		t.Fatalf("got %d files: %v", len(files), files)
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	in := map[string][]byte{"main.tf": []byte("a"), "modules/vpc/main.tf": []byte("b")}
	raw, err := Write(in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Write(in)
	if err != nil || !bytes.Equal(raw, again) {
		t.Fatal("Write must be reproducible")
	}
	out, err := Read(bytes.NewReader(raw), Limits{MaxFiles: 10, MaxFileBytes: 10, MaxTotalBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
}
