// Package supplychain signs Terraplane's releases and describes what they hold, in the
// formats cosign reads: simple-signing signatures of image and chart manifests (the
// `sha256-<digest>.sig` tag), SPDX 2.3 SBOMs of each image (the `sha256-<digest>.sbom`
// tag of `cosign attach sbom`), and in-toto attestations signed as DSSE envelopes (the
// `sha256-<digest>.att` tag of `cosign attest`): SLSA v1 provenance and the SPDX SBOM.
// It verifies them as well, with the release's public key.
package supplychain
