package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseSource parses a package of one group doc and src (after its package clause).
func parseSource(t *testing.T, src string) (*Package, error) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "doc.go", "// +groupName=w.example.io\npackage v1alpha1\n")
	writeFile(t, dir, "w.go", "package v1alpha1\n\n"+src)
	return parsePackage(dir)
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadProvider checks what a provider marker and its printer columns declare, and
// that a malformed one is refused with an error naming the problem.
func TestReadProvider(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []Provider
		err  string
	}{{
		name: "kind and doc",
		src:  "// +terraplane:provider:kind=Provider,doc=\"configures w.\"\ntype ProviderSpec struct{}\n",
		want: []Provider{{Name: "Provider", Spec: "ProviderSpec", Doc: []string{"configures w."}}},
	}, {
		name: "doc lines, status and columns in order",
		src: "// WSpec is the spec.\n" +
			"// +terraplane:provider:printcolumn:name=\"HOST\",type=string,JSONPath=`.spec.host`\n" +
			"// +terraplane:provider:kind=Config,status=ConfigStatus,doc=\"holds a \\\"w\\\",\\nwith two lines.\"\n" +
			"// +terraplane:provider:printcolumn:name=\"READY\",type=string,JSONPath=`.status.conditions[?(@.type==\"Ready\")].status`\n" +
			"type WSpec struct{}\n",
		want: []Provider{{Name: "Config", Spec: "WSpec", Doc: []string{`holds a "w",`, "with two lines."}, Status: "ConfigStatus",
			Columns: []PrintColumn{
				{Name: "HOST", Type: "string", JSONPath: ".spec.host"},
				{Name: "READY", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
			}}},
	}, {
		name: "short names and categories",
		src:  "// +terraplane:provider:kind=ProviderConfig,shortNames=wpc;wproviderconfig,categories=w,doc=\"configures w.\"\ntype ProviderConfigSpec struct{}\n",
		want: []Provider{{Name: "ProviderConfig", Spec: "ProviderConfigSpec", Doc: []string{"configures w."},
			ShortNames: []string{"wpc", "wproviderconfig"}, Categories: []string{"w"}}},
	}, {
		name: "sorted by kind",
		src: "// +terraplane:provider:kind=Zeta,doc=\"z.\"\ntype ZSpec struct{}\n\n" +
			"// +terraplane:provider:kind=Alpha,doc=\"a.\"\ntype ASpec struct{}\n",
		want: []Provider{{Name: "Alpha", Spec: "ASpec", Doc: []string{"a."}}, {Name: "Zeta", Spec: "ZSpec", Doc: []string{"z."}}},
	}, {
		name: "no marker",
		src:  "// ProviderSpec is hand-written.\ntype ProviderSpec struct{}\n",
	}, {
		name: "no doc",
		src:  "// +terraplane:provider:kind=Provider\ntype ProviderSpec struct{}\n",
		err:  "needs kind= and doc=",
	}, {
		name: "no kind",
		src:  "// +terraplane:provider:doc=\"configures w.\"\ntype ProviderSpec struct{}\n",
		err:  "needs kind= and doc=",
	}, {
		name: "misspelt option",
		src:  "// +terraplane:provider:kind=Provider,stauts=S,doc=\"d.\"\ntype ProviderSpec struct{}\n",
		err:  "not stauts=",
	}, {
		name: "twice",
		src:  "// +terraplane:provider:kind=A,doc=\"a.\"\n// +terraplane:provider:kind=B,doc=\"b.\"\ntype ProviderSpec struct{}\n",
		err:  "appears twice",
	}, {
		name: "not a struct",
		src:  "// +terraplane:provider:kind=Provider,doc=\"d.\"\ntype ProviderSpec string\n",
		err:  "marks a struct type",
	}, {
		name: "column without kind",
		src:  "// +terraplane:provider:printcolumn:name=\"HOST\",type=string,JSONPath=`.spec.host`\ntype ProviderSpec struct{}\n",
		err:  "needs a +terraplane:provider:kind=... marker",
	}, {
		name: "column without JSONPath",
		src:  "// +terraplane:provider:kind=Provider,doc=\"d.\"\n// +terraplane:provider:printcolumn:name=\"HOST\",type=string\ntype ProviderSpec struct{}\n",
		err:  "needs name=, type= and JSONPath=",
	}, {
		name: "column of unknown type",
		src:  "// +terraplane:provider:kind=Provider,doc=\"d.\"\n// +terraplane:provider:printcolumn:name=\"HOST\",type=text,JSONPath=`.spec.host`\ntype ProviderSpec struct{}\n",
		err:  `type="text" is not one of`,
	}, {
		name: "column option kindgen would drop",
		src:  "// +terraplane:provider:kind=Provider,doc=\"d.\"\n// +terraplane:provider:printcolumn:name=\"HOST\",type=string,JSONPath=`.spec.host`,priority=1\ntype ProviderSpec struct{}\n",
		err:  "not priority=",
	}, {
		name: "JSONPath with a backtick",
		src:  "// +terraplane:provider:kind=Provider,doc=\"d.\"\n// +terraplane:provider:printcolumn:name=\"HOST\",type=string,JSONPath=\".spec.`h`\"\ntype ProviderSpec struct{}\n",
		err:  "may not contain a backtick",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pkg, err := parseSource(t, tc.src)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parsePackage error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, pkg.Providers); diff != "" {
				t.Errorf("providers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProviderComment checks the generated kind's doc comment: its name, then the doc lines.
func TestProviderComment(t *testing.T) {
	for _, tc := range []struct {
		doc  []string
		want string
	}{
		{doc: []string{"configures w."}, want: "// Provider configures w."},
		{doc: []string{"configures w", "in two lines."}, want: "// Provider configures w\n// in two lines."},
		{doc: []string{"configures w.", "", "A paragraph."}, want: "// Provider configures w.\n//\n// A paragraph."},
	} {
		if got := (Provider{Name: "Provider", Doc: tc.doc}).Comment(); got != tc.want {
			t.Errorf("Comment() of %q = %q, want %q", tc.doc, got, tc.want)
		}
	}
}

// TestResourceMarker checks the kind's kubebuilder resource marker, with and without
// short names and categories of its own.
func TestResourceMarker(t *testing.T) {
	for _, tc := range []struct {
		p    Provider
		want string
	}{
		{Provider{}, "+kubebuilder:resource:categories=terraplane;provider"},
		{Provider{ShortNames: []string{"tfpc"}, Categories: []string{"terraform"}}, "+kubebuilder:resource:categories=terraplane;provider;terraform,shortName=tfpc"},
		{Provider{ShortNames: []string{"a", "b"}}, "+kubebuilder:resource:categories=terraplane;provider,shortName=a;b"},
	} {
		if got := tc.p.ResourceMarker(); got != tc.want {
			t.Errorf("ResourceMarker() of %+v = %s, want %s", tc.p, got, tc.want)
		}
	}
}

// TestColumnMarker checks that a column becomes the kubebuilder marker controller-gen reads.
func TestColumnMarker(t *testing.T) {
	for _, tc := range []struct {
		col  PrintColumn
		want string
	}{
		{PrintColumn{"REGION", "string", ".spec.region"}, "+kubebuilder:printcolumn:name=\"REGION\",type=string,JSONPath=`.spec.region`"},
		{PrintColumn{"READY", "string", `.status.conditions[?(@.type=="Ready")].status`}, "+kubebuilder:printcolumn:name=\"READY\",type=string,JSONPath=`.status.conditions[?(@.type==\"Ready\")].status`"},
		{PrintColumn{`A "B"`, "integer", ".spec.n"}, "+kubebuilder:printcolumn:name=\"A \\\"B\\\"\",type=integer,JSONPath=`.spec.n`"},
	} {
		if got := tc.col.Marker(); got != tc.want {
			t.Errorf("Marker() of %+v = %s, want %s", tc.col, got, tc.want)
		}
	}
}

// TestRunProviderOnly checks that a package whose only generated kind is a provider gets
// its file, GroupVersion included, and loses it when the marker goes.
func TestRunProviderOnly(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "v1alpha1")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "doc.go", "// +groupName=w.example.io\npackage v1alpha1\n")
	writeFile(t, dir, "w.go", "package v1alpha1\n\n// +terraplane:provider:kind=Provider,doc=\"configures w.\"\ntype ProviderSpec struct{}\n")
	if err := run(root); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, output))
	if err != nil {
		t.Fatalf("no generated file: %v", err)
	}
	for _, want := range []string{"var GroupVersion = ", "type Provider struct", "SchemeBuilder.Register(&Provider{}, &ProviderList{})"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("generated file lacks %q", want)
		}
	}
	writeFile(t, dir, "w.go", "package v1alpha1\n\n// ProviderSpec lost its marker.\ntype ProviderSpec struct{}\n")
	if err := run(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, output)); !os.IsNotExist(err) {
		t.Errorf("generated file left behind after the marker went: %v", err)
	}
}
