# Written by make generate (hack/providerlocks) from the toolchain's provider pins:
# every workspace of this module installs these versions. Do not edit.

provider "registry.terraform.io/hashicorp/azurerm" {
  version     = "4.55.0"
  constraints = "~> 4.9"
}
