# Written by make generate (hack/providerlocks) from the toolchain's provider pins:
# every workspace of this module installs these versions. Do not edit.

provider "registry.terraform.io/hashicorp/random" {
  version     = "3.9.0"
  constraints = "~> 3.9"
}
