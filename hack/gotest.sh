#!/usr/bin/env bash
# Runs `go test` with its arguments, keeps the whole output in $TEST_LOG (default
# .terraplane/test.log) and, when a test fails, ends with a summary of what failed:
# the failing tests, their own messages and any panic, so they are not lost among
# controller logs.
set -uo pipefail
log=${TEST_LOG:-.terraplane/test.log}
mkdir -p "$(dirname "$log")"
"${GO:-go}" test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
	echo
	echo "==> summary of failures (the whole output is in $log)"
	grep -E '^[[:space:]]*--- FAIL|^[[:space:]]+[A-Za-z0-9_]+_test\.go:[0-9]+:|^panic:|^FAIL|^[[:space:]]+Error Trace:|^[[:space:]]+Error:' "$log" | cut -c1-400
fi
exit "$status"
