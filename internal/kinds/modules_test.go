package kinds

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/render"
)

// providerInputs are the module inputs each Provider kind's resolver passes
// (registry.ProviderConfig.Inputs): a bundled module may require them without a
// forProvider field.
var providerInputs = map[string][]string{
	"aws.terraplane.io":        {"endpoint_url", "region"},
	"postgresql.terraplane.io": {"host", "port"},
	"mysql.terraplane.io":      {"host", "port"},
	"gcp.terraplane.io":        {"project", "region"},
	"azure.terraplane.io":      {"location"},
}

// TestBundledModulesMatchRegistrations inspects every bundled module against its
// registration: each forProvider field is a module variable, each required variable is
// a forProvider field or a Provider input, and each connection key comes from an output.
func TestBundledModulesMatchRegistrations(t *testing.T) {
	r := NewRegistry(nil)
	for _, k := range r.TerraformKinds() {
		if k.Terraform.LoadModule != nil {
			continue // the module is chosen per resource
		}
		t.Run(k.GVK.String(), func(t *testing.T) {
			m, err := module.Load(k.Terraform.Modules, k.Terraform.ModuleDir)
			if err != nil {
				t.Fatalf("module %s: %v", k.Terraform.ModuleDir, err)
			}
			fields := forProviderFields(t, k)
			for _, f := range fields {
				if _, ok := m.Variable(render.Snake(f)); !ok {
					t.Errorf("forProvider.%s has no variable %s in %s", f, render.Snake(f), k.Terraform.ModuleDir)
				}
			}
			for _, v := range m.Variables {
				fromField := slices.ContainsFunc(fields, func(f string) bool { return render.Snake(f) == v.Name })
				supplied := fromField || slices.Contains(providerInputs[k.ProviderGVK.Group], v.Name)
				if v.Required && !supplied {
					t.Errorf("variable %s of %s is required, but neither forProvider nor the Provider supplies it", v.Name, k.Terraform.ModuleDir)
				}
			}
			for output, key := range k.Terraform.ConnectionKeys {
				if _, ok := m.Output(output); !ok {
					t.Errorf("connection key %s maps output %s, which %s does not declare", key, output, k.Terraform.ModuleDir)
				}
			}
		})
	}
}

// forProviderFields are the JSON names of a managed kind's spec.forProvider fields.
func forProviderFields(t *testing.T, k *registry.ManagedKind) []string {
	t.Helper()
	spec := reflect.ValueOf(k.New()).Elem().FieldByName("Spec")
	if !spec.IsValid() || !spec.FieldByName("ForProvider").IsValid() {
		t.Fatalf("%s has no spec.forProvider", k.GVK.Kind)
	}
	typ := spec.FieldByName("ForProvider").Type()
	var names []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}
