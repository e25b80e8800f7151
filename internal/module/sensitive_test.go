package module

import "testing"

// TestMarksBeyondSchemas: a sensitive variable (at the root or in a module), a
// sensitive output a module reads, the sensitive function, a module from elsewhere or
// a file that does not parse may mark values; the top module's sensitive outputs, and
// resources with count or for_each, do not.
func TestMarksBeyondSchemas(t *testing.T) {
	root := `{"module": {"this": {"source": "./module"}}, "variable": {"name": {"sensitive": false}}}`
	for name, tc := range map[string]struct {
		files map[string]string
		want  bool
	}{
		"resources, count, for_each and a nested module": {map[string]string{
			"main.tf.json":      root,
			"module/main.tf":    "module \"net\" { source = \"./net\" }\nresource \"aws_s3_bucket\" \"this\" { for_each = toset([\"a\"]) }\nresource \"aws_iam_user\" \"u\" { count = 1 }",
			"module/net/vpc.tf": "resource \"aws_vpc\" \"v\" {}\noutput \"id\" { value = \"x\" }",
		}, false},
		"the top module's sensitive output": {map[string]string{
			"main.tf.json":   root,
			"module/main.tf": "resource \"random_password\" \"p\" {}\noutput \"p\" {\nsensitive = true\nvalue = random_password.p.result\n}",
		}, false},
		"a sensitive variable at the root":   {map[string]string{"main.tf.json": `{"module": {"this": {"source": "./module"}}, "variable": {"password": {"sensitive": true}}}`, "module/main.tf": `resource "aws_s3_bucket" "b" {}`}, true},
		"a sensitive variable in the module": {map[string]string{"main.tf.json": root, "module/main.tf": "variable \"p\" { sensitive = true }\nresource \"aws_s3_bucket\" \"b\" {}"}, true},
		"a sensitive output a module reads": {map[string]string{
			"main.tf.json":      root,
			"module/main.tf":    `module "net" { source = "./net" }`,
			"module/net/vpc.tf": "output \"id\" {\nsensitive = true\nvalue = \"x\"\n}",
		}, true},
		"the sensitive function":     {map[string]string{"main.tf.json": root, "module/main.tf": `resource "aws_s3_bucket" "b" { bucket = sensitive("x") }`}, true},
		"a module from elsewhere":    {map[string]string{"main.tf.json": root, "module/main.tf": `module "s3" { source = "terraform-aws-modules/s3-bucket/aws" }`}, true},
		"a file that does not parse": {map[string]string{"main.tf.json": root, "module/main.tf": `resource "aws_s3_bucket" {`}, true},
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string][]byte{}
			for n, c := range tc.files {
				files[n] = []byte(c)
			}
			if got := (&Module{Files: files}).MarksBeyondSchemas(); got != tc.want {
				t.Errorf("MarksBeyondSchemas = %v, want %v", got, tc.want)
			}
		})
	}
}
