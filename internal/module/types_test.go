package module

import (
	"reflect"
	"testing"
)

// TestDeclaredTypes: the types of the module and of the local modules it calls, managed
// and data; a call to a module from elsewhere, or a file that does not parse, leaves
// the list incomplete.
func TestDeclaredTypes(t *testing.T) {
	for name, tc := range map[string]struct {
		files    map[string]string
		want     []string
		complete bool
	}{
		"one module": {map[string]string{"main.tf": `
resource "aws_s3_bucket" "b" {}
resource "aws_s3_bucket_policy" "p" {}
data "aws_iam_policy_document" "d" {}`}, []string{"aws_iam_policy_document", "aws_s3_bucket", "aws_s3_bucket_policy"}, true},
		"a local module called": {map[string]string{
			"main.tf.json":      `{"module": {"this": {"source": "./module"}}, "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws"}}}}`,
			"module/main.tf":    `module "net" { source = "./net" }` + "\n" + `resource "random_id" "r" {}`,
			"module/net/vpc.tf": `resource "aws_vpc" "v" {}`,
		}, []string{"aws_vpc", "random_id"}, true},
		"a registry module called": {map[string]string{"main.tf": `
module "s3" { source = "terraform-aws-modules/s3-bucket/aws" }
resource "random_id" "r" {}`}, []string{"random_id"}, false},
		"a git module called deeper": {map[string]string{
			"main.tf":   `module "a" { source = "./a" }`,
			"a/main.tf": `module "b" { source = "git::https://example.com/b.git" }`,
		}, nil, false},
		"a file that does not parse": {map[string]string{"main.tf": `resource "aws_s3_bucket" "b" {`}, nil, false},
	} {
		t.Run(name, func(t *testing.T) {
			m := &Module{Files: map[string][]byte{}}
			for n, c := range tc.files {
				m.Files[n] = []byte(c)
			}
			got, complete := m.DeclaredTypes()
			if !reflect.DeepEqual(got, tc.want) || complete != tc.complete {
				t.Errorf("types %v complete %v, want %v %v", got, complete, tc.want, tc.complete)
			}
		})
	}
}
