package migrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadVarFiles: values come from terraform.tfvars, then terraform.tfvars.json, then
// the *.auto.tfvars(.json) files in name order, each later file winning, as terraform
// loads them; HCL values keep their types.
func TestReadVarFiles(t *testing.T) {
	cases := map[string]struct {
		files   map[string]string
		want    map[string]any
		wantErr string
	}{
		"none": {nil, map[string]any{}, ""},
		"hcl types": {map[string]string{"terraform.tfvars": `
name    = "db"
size    = 20
ha      = true
zones   = ["a", "b"]
tags    = { team = "blue" }
nothing = null
`}, map[string]any{"name": "db", "size": float64(20), "ha": true, "zones": []any{"a", "b"}, "tags": map[string]any{"team": "blue"}, "nothing": nil}, ""},
		"json": {map[string]string{"terraform.tfvars.json": `{"name": "db", "size": 3}`}, map[string]any{"name": "db", "size": float64(3)}, ""},
		"later files win": {map[string]string{
			"terraform.tfvars":      `name = "first"` + "\n" + `keep = 1`,
			"terraform.tfvars.json": `{"name": "second"}`,
			"b.auto.tfvars":         `name = "fourth"`,
			"a.auto.tfvars.json":    `{"name": "third", "extra": "x"}`,
		}, map[string]any{"name": "fourth", "keep": float64(1), "extra": "x"}, ""},
		"not read":                  {map[string]string{"prod.tfvars": `name = "prod"`, "variables.tf": `variable "name" {}`}, map[string]any{}, ""},
		"expressions are evaluated": {map[string]string{"terraform.tfvars": `n = 1 + 2` + "\n" + `s = "a-${"b"}"`}, map[string]any{"n": float64(3), "s": "a-b"}, ""},
		"a reference is refused":    {map[string]string{"terraform.tfvars": `name = var.other`}, nil, "terraform.tfvars"},
		"bad hcl":                   {map[string]string{"terraform.tfvars": `name = `}, nil, "parse"},
		"a block is refused":        {map[string]string{"terraform.tfvars": "x {\n}\n"}, nil, "parse"},
		"bad json":                  {map[string]string{"x.auto.tfvars.json": `{"name":`}, nil, "parse"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for f, content := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ReadVarFiles(dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ReadVarFiles = %v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}
