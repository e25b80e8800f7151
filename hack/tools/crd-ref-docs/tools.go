//go:build tools

// Package tools pins crd-ref-docs, which writes the API reference in docs/api.
package tools

import _ "github.com/elastic/crd-ref-docs"
