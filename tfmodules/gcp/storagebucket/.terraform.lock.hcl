# Written by make generate (hack/providerlocks) from the toolchain's provider pins:
# every workspace of this module installs these versions. Do not edit.

provider "registry.terraform.io/hashicorp/google" {
  version     = "6.50.0"
  constraints = "~> 6.0"
}
