#!/usr/bin/env bash
# Starts the cluster's etcd and kube-apiserver in TP_DIR, the API server on TP_PORT, and
# waits until it answers /readyz. Each keeps running on its own (its own session, its
# pid in TP_DIR/<name>.pid). The token travels in the environment, never on a command line.
set -euo pipefail
: "${TP_DIR:?}" "${TP_PORT:?}" "${TP_BIN:?}" "${TP_TOKEN:?}"
for b in etcd kube-apiserver; do
  [ -x "$TP_BIN/$b" ] || { echo "$TP_BIN/$b is missing: make tools builds it" >&2; exit 1; }
done
command -v openssl >/dev/null || { echo "openssl not found on PATH" >&2; exit 1; }
command -v curl >/dev/null || { echo "curl not found on PATH" >&2; exit 1; }

taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
running() { [ -f "$TP_DIR/$1.pid" ] && kill -0 "$(cat "$TP_DIR/$1.pid")" 2>/dev/null; }

mkdir -p "$TP_DIR/etcd" "$TP_DIR/certs"
chmod 700 "$TP_DIR" "$TP_DIR/etcd"
cd "$TP_DIR"
umask 077
printf '%s,admin,admin,"system:masters"\n' "$TP_TOKEN" > tokens.csv
[ -f certs/sa.key ] || { openssl genrsa -out certs/sa.key 2048 2>/dev/null && openssl rsa -in certs/sa.key -pubout -out certs/sa.pub 2>/dev/null; }

if ! running etcd; then
  etcd_port=""
  for _ in $(seq 50); do
    p=$((33000 + RANDOM % 7000)) # below the ephemeral range, apart from the API servers'
    if ! taken "$p"; then etcd_port=$p; break; fi
  done
  [ -n "$etcd_port" ] || { echo "no free port for etcd" >&2; exit 1; }
  echo "$etcd_port" > etcd.port
  setsid env -i PATH=/usr/bin:/bin "$TP_BIN/etcd" --name default --data-dir "$TP_DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls http://127.0.0.1:0 --unsafe-no-fsync \
    > etcd.log 2>&1 < /dev/null &
  echo $! > etcd.pid
fi
etcd_port=$(cat etcd.port)
for _ in $(seq 150); do
  curl -fs "http://127.0.0.1:$etcd_port/health" >/dev/null 2>&1 && break
  running etcd || { echo "etcd exited; its log ends with:" >&2; tail -5 etcd.log >&2; exit 1; }
  sleep 0.2
done

if ! running kube-apiserver; then
  if taken "$TP_PORT"; then
    echo "port $TP_PORT on 127.0.0.1 is taken: replace random_integer.port to pick another" >&2
    exit 1
  fi
  setsid env -i PATH=/usr/bin:/bin "$TP_BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
    --secure-port "$TP_PORT" --cert-dir "$TP_DIR/certs" --token-auth-file "$TP_DIR/tokens.csv" \
    --authorization-mode RBAC --service-cluster-ip-range 10.0.0.0/24 --allow-privileged=true \
    --disable-admission-plugins ServiceAccount --endpoint-reconciler-type none \
    --service-account-issuer "https://127.0.0.1:$TP_PORT" \
    --service-account-key-file "$TP_DIR/certs/sa.pub" --service-account-signing-key-file "$TP_DIR/certs/sa.key" \
    > kube-apiserver.log 2>&1 < /dev/null &
  echo $! > kube-apiserver.pid
fi
for _ in $(seq 300); do
  [ "$(curl -sk --max-time 2 "https://127.0.0.1:$TP_PORT/readyz" 2>/dev/null)" = ok ] && exit 0
  running kube-apiserver || { echo "kube-apiserver exited; its log ends with:" >&2; tail -5 kube-apiserver.log >&2; exit 1; }
  sleep 0.2
done
echo "kube-apiserver on port $TP_PORT is not ready after 60 s; see $TP_DIR/kube-apiserver.log" >&2
exit 1
