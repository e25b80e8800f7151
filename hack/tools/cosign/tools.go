//go:build tools

// Package tools pins cosign, with which the release tests check signatures and
// attestations as a user's security team does.
package tools

import _ "github.com/sigstore/cosign/v2/cmd/cosign"
