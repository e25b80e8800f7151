package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden file")

// TestGenerate compares the code generated for testdata/v1alpha1 with its golden file.
func TestGenerate(t *testing.T) {
	pkg, err := parsePackage("testdata/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := generate(pkg)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "zz_generated.managed.go.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("generated code differs from %s (-want +got; go test ./hack/kindgen -update rewrites it):\n%s", golden, diff)
	}
}

func TestMarkerArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
		err  bool
	}{
		{in: "kind=A", want: map[string]string{"kind": "A"}},
		{in: `kind=A,noun="an a, really"`, want: map[string]string{"kind": "A", "noun": "an a, really"}},
		{in: `noun="x",class=B`, want: map[string]string{"noun": "x", "class": "B"}},
		{in: "name=\"R\",JSONPath=`.a[?(@.t==\"x,y\")]`,type=string", want: map[string]string{"name": "R", "JSONPath": `.a[?(@.t=="x,y")]`, "type": "string"}},
		{in: "JSONPath=`.a`x", err: true},
		{in: "JSONPath=`.a", err: true},
		{in: "kind", err: true},
		{in: `noun="x"y`, err: true},
	} {
		got, err := markerArgs(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("markerArgs(%q) error = %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); !tc.err && diff != "" {
			t.Errorf("markerArgs(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestMarkerErrors checks that a malformed marker is refused, naming the problem.
func TestMarkerErrors(t *testing.T) {
	for name, src := range map[string]string{
		"no noun":       "// +terraplane:managed:kind=W\ntype WParameters struct{}\n",
		"not a struct":  "// +terraplane:managed:kind=W,noun=\"a w\"\ntype WParameters string\n",
		"unquoted":      "// +terraplane:managed:kind=W,noun=\"a w\"\ntype WParameters struct {\n\t// +terraplane:immutable=why\n\tA string `json:\"a\"`\n}\n",
		"non-scalar":    "// +terraplane:managed:kind=W,noun=\"a w\"\ntype WParameters struct {\n\t// +terraplane:immutable=\"why\"\n\tA []string `json:\"a\"`\n}\n",
		"no group name": "// +terraplane:managed:kind=W,noun=\"a w\"\ntype WParameters struct{}\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			doc := "// +groupName=w.example.io\npackage v1alpha1\n"
			if name == "no group name" {
				doc = "package v1alpha1\n"
			}
			if err := os.WriteFile(filepath.Join(dir, "doc.go"), []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "w.go"), []byte("package v1alpha1\n\n"+src), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := parsePackage(dir); err == nil {
				t.Fatalf("parsePackage accepted %s", name)
			}
		})
	}
}
