#!/usr/bin/env bash
# generate.sh writes the API reference in docs/api from the Go types in apis/ with
# crd-ref-docs (pinned in hack/tools/crd-ref-docs; make generate runs it): one page per
# API group, common.md for the types of apis/common, and README.md listing the groups.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${TERRAPLANE_CACHE:-$HOME/.cache/terraplane}/bin/crd-ref-docs
OUT=$ROOT/docs/api
cd "$ROOT"
rm -rf "$OUT" && mkdir -p "$OUT"
run() {
	"$BIN" --config hack/api-docs/config.yaml --templates-dir hack/api-docs/templates --source-path ./apis \
		--renderer markdown --log-level ERROR "$@"
}
run --output-mode group --output-path "$OUT"
run --output-mode single --template-value page=common --output-path "$OUT/common.md"
run --output-mode single --template-value page=index --output-path "$OUT/README.md"
# Squeeze the blank lines the templates leave.
for f in "$OUT"/*.md; do cat -s "$f" >"$f.tmp" && mv "$f.tmp" "$f"; done
