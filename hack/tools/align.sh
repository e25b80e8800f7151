#!/usr/bin/env bash
# align.sh gives terraplane and the Kubernetes tool modules (hack/tools/kube and
# hack/tools/kubenode) one version of every module more than one of them compiles: the
# higher, written into the others' go.mod. Go's build cache then compiles each shared
# package once, so make run builds kube-apiserver right after bin/terraplane in less than
# half its cold time (client-go, the API types, grpc and protobuf are already compiled).
#
#   hack/tools/align.sh           align (go get the higher version, then go mod tidy)
#   hack/tools/align.sh --check   list what differs and fail if anything does (make lint)
#
# The k8s.io staging modules come from the tool modules' replace directives: those are
# not changed here; when they differ from terraplane's k8s.io/api, move the pin
# (KUBE_VERSION in hack/install-tools.sh and the replace directives) instead.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GO=${GO:-go}

# The module directories and the packages each one builds with the same flags.
DIRS=("$ROOT" "$ROOT/hack/tools/kube" "$ROOT/hack/tools/kubenode")
declare -A PKGS=(
	["$ROOT"]="./cmd/terraplane"
	["$ROOT/hack/tools/kube"]="k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl go.etcd.io/etcd/server/v3"
	["$ROOT/hack/tools/kubenode"]="k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-proxy"
)

# modules DIR prints "path version replaced" for each module DIR's packages compile
# (replaced: yes when a replace directive chooses the version).
modules() {
	# shellcheck disable=SC2086 # PKGS holds several packages
	(cd "$1" && CGO_ENABLED=0 "$GO" list -deps \
		-f '{{with .Module}}{{if not .Main}}{{.Path}} {{with .Replace}}{{.Version}} yes{{else}}{{.Version}} no{{end}}{{end}}{{end}}' \
		${PKGS[$1]} | sort -u)
}

# differences prints "dir path version highest replaced" for every module a directory
# compiles at a lower version than another directory does. sort -V orders the versions,
# with the pre-release's "-" turned into "~" (which it sorts before the release).
differences() {
	local all top
	all=$(for dir in "${DIRS[@]}"; do modules "$dir" | sed "s|^|$dir |"; done)
	top=$(awk '{k = $3; sub(/-/, "~", k); print $2, k, $3}' <<<"$all" | sort -k1,1 -k2,2V |
		awk '{top[$1] = $3} END {for (p in top) print p, top[p]}')
	awk 'NR == FNR {top[$1] = $2; next} $3 != top[$2] {print $1, $2, $3, top[$2], $4}' <(echo "$top") <(echo "$all")
}

check=false
[[ ${1:-} != --check ]] || check=true
for round in 1 2 3 4 5; do
	diffs=$(differences)
	[[ -n $diffs ]] || { echo "aligned: terraplane and hack/tools/{kube,kubenode} compile one version of each shared module"; exit 0; }
	if $check || grep -q ' yes$' <<<"$diffs"; then
		echo "the Kubernetes tool modules and terraplane compile different versions of these modules:" >&2
		while read -r dir path have want replaced; do
			[[ $dir != "$ROOT" ]] || dir=$ROOT/.
			note=""
			[[ $replaced != yes ]] || note=": a replace directive chooses it; move KUBE_VERSION"
			echo "  ${dir#"$ROOT"/}: $path $have, another builds $want$note" >&2
		done <<<"$diffs"
		$check && echo "run hack/tools/align.sh to align them (a cold make run then compiles them once)" >&2
		exit 1
	fi
	echo "round $round: $(wc -l <<<"$diffs") modules to raise"
	while read -r dir path _ want _; do
		(cd "$dir" && "$GO" get "$path@$want" 2>&1 | grep -v '^go: downloading ' || true)
	done <<<"$diffs"
	for dir in "${DIRS[@]}"; do (cd "$dir" && "$GO" mod tidy); done
done
echo "still not aligned after 5 rounds" >&2
exit 1
