//go:build tools

// Package tools pins staticcheck for hack/install-tools.sh.
package tools

import _ "honnef.co/go/tools/cmd/staticcheck"
