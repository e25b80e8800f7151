package integration

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/devenv"
)

var (
	yamlBlock     = regexp.MustCompile("(?s)```yaml\n(.*?)```")
	namespaceLine = regexp.MustCompile(`namespace: ([a-z0-9-]+)`)
	definedKind   = regexp.MustCompile(`(?m)^\s+kind: ([A-Z][A-Za-z0-9]*)\s*$`)
	kindLine      = regexp.MustCompile(`(?m)^kind: ([A-Z][A-Za-z0-9]*)\s*$`)
)

// TestDocsExamplesAreValid dry-run applies every complete manifest in the README and the
// user docs to the real API server, so that what users copy keeps matching the CRDs.
// Blocks with elisions (...) are fragments, not manifests. A block of a claim kind that a
// ClaimDefinition on the same page defines is left out: its CRD exists only once a
// controller serves the definition.
func TestDocsExamplesAreValid(t *testing.T) {
	ctx := context.Background()
	files := []string{"../../README.md"}
	for _, pattern := range []string{"../../docs/*.md", "../../docs/kinds/*.md"} {
		more, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, more...)
	}
	checked := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		defined := claimDefinitionKinds(string(raw))
		for i, m := range yamlBlock.FindAllStringSubmatch(string(raw), -1) {
			block := m[1]
			if !strings.Contains(block, "apiVersion:") || strings.Contains(block, "...") || definesOnly(block, defined) {
				continue
			}
			for _, ns := range namespaceLine.FindAllStringSubmatch(block, -1) {
				if err := env.Namespace(ctx, ns[1]); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := devenv.ApplyYAML(ctx, env.Client, []byte(block), client.DryRunAll); err != nil {
				t.Errorf("%s, yaml block %d: %v\n%s", filepath.Base(f), i+1, err, block)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("checked %d manifests in the docs; the docs hold more than that", checked)
	}
}

// claimDefinitionKinds are the kinds, and their classes, that ClaimDefinitions on a page
// define (spec.names.kind).
func claimDefinitionKinds(page string) map[string]bool {
	out := map[string]bool{}
	for _, m := range yamlBlock.FindAllStringSubmatch(page, -1) {
		if !strings.Contains(m[1], "kind: ClaimDefinition") {
			continue
		}
		for _, k := range definedKind.FindAllStringSubmatch(m[1], -1) {
			out[k[1]], out[k[1]+"Class"] = true, true
		}
	}
	return out
}

// definesOnly reports whether every object of block is of a kind in defined.
func definesOnly(block string, defined map[string]bool) bool {
	kinds := kindLine.FindAllStringSubmatch(block, -1)
	for _, k := range kinds {
		if !defined[k[1]] {
			return false
		}
	}
	return len(kinds) > 0
}
