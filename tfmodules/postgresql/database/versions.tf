terraform {
  required_providers {
    random = {
      source = "hashicorp/random"
    }
  }
}
