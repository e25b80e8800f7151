// Package image builds Terraplane's container image without a container engine: a static
// terraplane, a tofu (or terraform) binary, CA certificates, a non-root user and,
// optionally, a filesystem mirror of Terraform providers, each part its own layer, for
// each platform of an image index (linux/amd64, linux/arm64). The result is written as
// an OCI image layout and as a tarball that `ctr import`, `podman load` and `docker
// load` accept, and can be pushed to a registry.
package image
