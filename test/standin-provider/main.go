package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tfprotov5/tf5server"
)

// SchemaFile is the schema the stand-in serves, beside its executable in the provider
// package directory (a copy of the package keeps both); TERRAPLANE_STANDIN_SCHEMA overrides it.
const SchemaFile = "schema.json"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "standin-provider:", err)
		os.Exit(1)
	}
}

func run() error {
	path, err := schemaPath()
	if err != nil {
		return err
	}
	address, ps, err := loadSchema(path)
	if err != nil {
		return fmt.Errorf("load %s: %w", path, err)
	}
	p, err := newProvider(address, ps, os.Getenv("TERRAPLANE_STANDIN_LOG"))
	if err != nil {
		return err
	}
	return tf5server.Serve(address, func() tfprotov5.ProviderServer { return p })
}

// schemaPath is TERRAPLANE_STANDIN_SCHEMA, else schema.json beside the executable.
func schemaPath() (string, error) {
	if p := os.Getenv("TERRAPLANE_STANDIN_SCHEMA"); p != "" {
		return p, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(exe), SchemaFile), nil
}

// loadSchema reads a `terraform providers schema -json` document of one provider.
func loadSchema(path string) (string, *tfjson.ProviderSchema, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	var doc tfjson.ProviderSchemas
	if err := json.Unmarshal(b, &doc); err != nil {
		return "", nil, err
	}
	if len(doc.Schemas) != 1 {
		return "", nil, fmt.Errorf("want the schema of one provider, got %d", len(doc.Schemas))
	}
	for address, ps := range doc.Schemas {
		return address, ps, nil
	}
	panic("unreachable")
}
