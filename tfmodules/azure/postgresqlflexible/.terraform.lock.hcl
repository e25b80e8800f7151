# Written by make generate (hack/providerlocks) from the toolchain's provider pins:
# every workspace of this module installs these versions. Do not edit.
# Not locked: hashicorp/azurerm (~> 4.9): no pinned version in the toolchain's mirror; a workspace
# chooses it at its first init, and keeps that version from then on.

provider "registry.terraform.io/hashicorp/random" {
  version     = "3.9.0"
  constraints = "~> 3.9"
}
