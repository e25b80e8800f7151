package engine

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// labelModule is a module as a registry serves it: a gzipped tar of its files.
func labelModule(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	src := []byte("variable \"name\" {\n  type = string\n}\n\noutput \"label\" {\n  value = \"acme-${var.name}\"\n}\n")
	if err := tw.WriteHeader(&tar.Header{Name: "main.tf", Mode: 0o644, Size: int64(len(src))}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(src); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestModuleRegistryMirror runs the real terraform: a module called by its public
// registry address (source = "acme/label/aws") comes from the module registry the engine
// is given, speaking terraform's modules.v1 protocol, without the network.
func TestModuleRegistryMirror(t *testing.T) {
	if testing.Short() {
		t.Skip("runs terraform")
	}
	archive := labelModule(t)
	var asked []string
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("/mirror/v1/modules/acme/label/aws/versions", func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"modules":[{"versions":[{"version":"1.0.0"},{"version":"1.1.0"}]}]}`))
	})
	mux.HandleFunc("/mirror/v1/modules/acme/label/aws/1.0.0/download", func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		w.Header().Set("X-Terraform-Get", srv.URL+"/archives/label-1.0.0.tar.gz")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/archives/label-1.0.0.tar.gz", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(archive)
	})
	e, err := New(context.Background(), Options{WorkDir: t.TempDir(), PluginMirror: t.TempDir(), ModuleRegistryURL: srv.URL + "/mirror/v1/modules"})
	if err != nil {
		t.Fatal(err)
	}
	main := "module \"label\" {\n  source  = \"acme/label/aws\"\n  version = \"~> 1.0.0\"\n  name    = \"x\"\n}\n\noutput \"label\" {\n  value = module.label.label\n}\n"
	res, err := e.Create(context.Background(), Workspace{ID: "registry", Files: map[string][]byte{"main.tf": []byte(main)}})
	if err != nil {
		t.Fatalf("create: %v (the registry was asked for %v)", err, asked)
	}
	if got := string(res.Outputs["label"].Value); got != `"acme-x"` {
		t.Errorf("output label = %s, want \"acme-x\"", got)
	}
	if len(asked) == 0 || asked[len(asked)-1] != "/mirror/v1/modules/acme/label/aws/1.0.0/download" {
		t.Errorf("the module registry was asked for %v, want the versions and then 1.0.0's download", asked)
	}
}
