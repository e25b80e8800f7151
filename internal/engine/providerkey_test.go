package engine

import (
	"bytes"
	"testing"
)

// TestProviderConfigKey: workspaces whose providers are configured differently never
// have the same key; workspaces that differ only in other inputs do.
func TestProviderConfigKey(t *testing.T) {
	root := []byte(`{"provider":{"aws":[{"region":"${var.terraplane_provider_aws.region}"}]},"module":{"this":{"source":"./module"}}}`)
	module := []byte(`resource "aws_s3_bucket" "b" { bucket = var.name }`)
	withProvider := []byte(`provider "aws" { region = var.region }
resource "aws_s3_bucket" "b" { bucket = var.name }`)
	readme := []byte("Configure it with this block:\n\n```hcl\nprovider \"aws\" {\n  region = \"us-east-1\"\n}\n```\n")
	ws := func(module []byte, vars string, secrets map[string]any) Workspace {
		return Workspace{Files: map[string][]byte{"main.tf.json": root, "module/main.tf": module, "module/README.md": readme,
			"terraform.tfvars.json": []byte(vars)}, SecretVars: secrets}
	}
	base := ws(module, `{"name":"a","terraplane_provider_aws":{"region":"us-east-1","endpoints":[{"s3":"http://one"}]}}`, nil)
	for _, tc := range []struct {
		name string
		ws   Workspace
		same bool
	}{
		{"another bucket name", ws(module, `{"name":"b","terraplane_provider_aws":{"region":"us-east-1","endpoints":[{"s3":"http://one"}]}}`, nil), true},
		{"another endpoint", ws(module, `{"name":"a","terraplane_provider_aws":{"region":"us-east-1","endpoints":[{"s3":"http://two"}]}}`, nil), false},
		{"another region", ws(module, `{"name":"a","terraplane_provider_aws":{"region":"eu-west-1","endpoints":[{"s3":"http://one"}]}}`, nil), false},
		{"a value read from a Secret", ws(module, `{"name":"a","terraplane_provider_aws":{"region":"us-east-1","endpoints":[{"s3":"http://one"}]}}`, map[string]any{"password": "x"}), false},
		{"a module with its own provider block, another input", ws(withProvider, `{"name":"b","terraplane_provider_aws":{"region":"us-east-1","endpoints":[{"s3":"http://one"}]}}`, nil), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := bytes.Equal(providerConfig(base), providerConfig(tc.ws)); got != tc.same {
				t.Errorf("same key = %v, want %v", got, tc.same)
			}
		})
	}
	own := ws(withProvider, `{"name":"a","region":"us-east-1"}`, nil)
	other := ws(withProvider, `{"name":"a","region":"eu-west-1"}`, nil)
	if bytes.Equal(providerConfig(own), providerConfig(other)) {
		t.Error("a module's own provider block reads its inputs: another region must be another key")
	}
}
