#!/usr/bin/env bash
# Stops the cluster's kube-apiserver and etcd (a pid is signalled only while its process
# still runs from TP_DIR's binaries' command line) and removes TP_DIR; safe to run again.
set -euo pipefail
: "${TP_DIR:?}"
ours() { [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' < "/proc/$1/cmdline" | grep -qF -- "$TP_DIR"; }
for name in kube-apiserver etcd; do
  f="$TP_DIR/$name.pid"
  [ -f "$f" ] || continue
  pid=$(cat "$f")
  ours "$pid" || continue
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do ours "$pid" || break; sleep 0.2; done
  if ours "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
done
rm -rf "$TP_DIR"
