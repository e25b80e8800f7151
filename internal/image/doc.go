// Package image builds Terraplane's container image without a container engine: a static
// terraplane, a terraform (or tofu) binary, CA certificates, a non-root user and,
// optionally, a filesystem mirror of Terraform providers, each part its own layer. The
// result is written as an OCI image layout and as a tarball that `docker load`,
// `podman load` and `ctr import` accept, and can be pushed to a registry.
package image
