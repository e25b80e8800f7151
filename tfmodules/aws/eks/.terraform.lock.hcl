# Written by make generate (hack/providerlocks) from the toolchain's provider pins:
# every workspace of this module installs these versions. Do not edit.

provider "registry.terraform.io/hashicorp/aws" {
  version     = "5.100.0"
  constraints = "~> 5.100"
}
