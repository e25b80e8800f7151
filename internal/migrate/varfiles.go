package migrate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/hashicorp/hcl/v2/hclparse"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// ReadVarFiles reads the variable values terraform would load by itself from dir:
// terraform.tfvars, terraform.tfvars.json, then *.auto.tfvars(.json) in name order.
func ReadVarFiles(dir string) (map[string]any, error) {
	files := []string{filepath.Join(dir, "terraform.tfvars"), filepath.Join(dir, "terraform.tfvars.json")}
	auto, _ := filepath.Glob(filepath.Join(dir, "*.auto.tfvars*"))
	sort.Strings(auto)
	files = append(files, auto...)
	values := map[string]any{}
	parser := hclparse.NewParser()
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if filepath.Ext(f) == ".json" {
			if err := json.Unmarshal(raw, &values); err != nil {
				return nil, fmt.Errorf("parse %s: %w", f, err)
			}
			continue
		}
		hf, diags := parser.ParseHCL(raw, f)
		if diags.HasErrors() {
			return nil, fmt.Errorf("parse %s: %s", f, diags.Error())
		}
		attrs, diags := hf.Body.JustAttributes()
		if diags.HasErrors() {
			return nil, fmt.Errorf("parse %s: %s", f, diags.Error())
		}
		for name, a := range attrs {
			v, diags := a.Expr.Value(nil)
			if diags.HasErrors() {
				return nil, fmt.Errorf("%s: %s", f, diags.Error())
			}
			b, err := ctyjson.Marshal(v, v.Type())
			if err != nil {
				return nil, err
			}
			var out any
			if err := json.Unmarshal(b, &out); err != nil {
				return nil, err
			}
			values[name] = out
		}
	}
	return values, nil
}
