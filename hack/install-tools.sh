#!/usr/bin/env bash
# install-tools.sh installs Terraplane's toolchain into a cache outside the repository.
#
# Everything is built from the Go module proxy at pinned versions (hack/tools/*/go.mod),
# found on the machine, or installed from Debian packages. A warm re-run only checks stamps
# and takes seconds.
#
#   hack/install-tools.sh [terraplane|kube|etcd|kubectl|kubectl-any|kubelet|kube-scheduler|kube-controller-manager|kube-proxy|node|cluster|
#                          controller-gen|crd-ref-docs|staticcheck|minio|helm|providers|random|cloud-schemas|terraform|tofu|tofu-arm64|moto|postgres|mariadb]...
#
# With no arguments it installs what 'make run' needs; 'cluster' is everything 'make
# cluster' runs (the Kubernetes components and the node). The target terraplane builds
# bin/terraplane in the background while the other targets install (make run uses it, so
# that its module downloads and compiling fill the time the tools leave idle). Every build
# prints what it is doing with an estimate, and a line a minute while it runs.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${TERRAPLANE_CACHE:-$HOME/.cache/terraplane}
BIN=$CACHE/bin
MIRROR=$CACHE/providers
# STANDIN_MIRROR holds test/standin-provider as google and azurerm: the tests' only.
STANDIN_MIRROR=$CACHE/standin-providers
mkdir -p "$BIN" "$MIRROR"

KUBE_VERSION=v1.37.2
RANDOM_VERSION=3.9.0
AWS_VERSION=5.100.0
# The google and azurerm versions the GCP and Azure modules are checked against: their
# schemas come from the Terraform CDK bindings generated from them (BINDING versions, on
# npm), served in the tests by test/standin-provider (see install_cloud_schemas).
GOOGLE_VERSION=6.50.0
GOOGLE_BINDING=16.12.1
AZURERM_VERSION=4.55.0
AZURERM_BINDING=14.23.1
# KUBECTL_MIN_MINOR: make run accepts a kubectl on PATH from v1.30 on instead of building
# the pinned one; the quickstart's get, describe, delete and jsonpath need nothing newer.
# The tests use the pinned kubectl (make tools-test builds it).
KUBECTL_MIN_MINOR=30

# EST is how long a cold build takes, in seconds, on a quiet 2-core machine, module
# downloads included (measured with hack/measure-cold-run.py), each alone, but for
# kube-apiserver after bin/terraplane, which reuses the packages it compiled (250, see
# build); the estimates printed scale it to this machine's cores. Every Go build
# here, and make build, is CGO_ENABLED=0 with -trimpath: one set of flags, so that Go's
# build cache compiles once a package the tools and bin/terraplane share.
declare -A EST=(
	[kube-apiserver]=460 [terraplane]=290 [etcd]=15 [kubectl]=35
	[minio]=175 [terraform-provider-random]=50 [controller-gen]=35 [cosign]=240
)
CORES=$(nproc 2>/dev/null || echo 2)

say() { printf '==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# mins SECONDS prints a duration as a person reads it: 45s, 3m20s.
mins() { if (($1 < 60)); then echo "${1}s"; else printf '%dm%02ds\n' $(($1 / 60)) $(($1 % 60)); fi; }

# estimate NAME prints NAME's cold build time on this machine in seconds (0: unknown).
estimate() { echo $((${EST[$1]:-0} * 2 / CORES)); }

# about SECONDS prints "about 4 min" (or "under a minute").
about() { if (($1 < 60)); then echo "under a minute"; else echo "about $((($1 + 30) / 60)) min"; fi; }

# heartbeat NAME EST prints a line a minute until killed (or until this script is gone).
heartbeat() {
	local name=$1 est=$2 start=$SECONDS next=60 left
	while sleep 5 && kill -0 $$ 2>/dev/null; do
		((SECONDS - start >= next)) || continue
		left=""
		if ((est > 0)); then
			if ((est > SECONDS - start + 30)); then
				left=", $(about $((est - SECONDS + start))) left"
			elif ((SECONDS - start < est + 120)); then
				left=", should finish soon"
			else
				left=", past the usual $(mins "$est"): a busy machine is slower"
			fi
		fi
		say "$name: still building ($(mins $((SECONDS - start))) so far$left)"
		next=$((next + 60))
	done
}

# progress NAME WHAT CMD... runs CMD with a start line (WHAT and the estimate), a line a
# minute while it runs, and a closing line with the time it took.
progress() {
	local name=$1 what=$2 est hb rc=0 start=$SECONDS once="one-off"
	shift 2
	est=$(estimate "$name")
	[[ $name != terraplane ]] || once="the first time; seconds after"
	if ((est > 0)); then
		say "$name: building $what ($(about "$est") on $CORES cores, $once)"
	else
		say "$name: building $what ($once; may take minutes)"
	fi
	heartbeat "$name" "$est" &
	hb=$!
	"$@" || rc=$?
	kill "$hb" 2>/dev/null || true
	wait "$hb" 2>/dev/null || true
	((rc == 0)) || return "$rc"
	say "$name: built in $(mins $((SECONDS - start)))"
}

# go_in DIR CMD... runs CMD (a go command) in DIR without its "go: downloading" lines: the
# step lines and the line a minute say what is happening.
go_in() {
	local dir=$1
	shift
	(cd "$dir" && "$@" 2> >(grep -v '^go: downloading ' >&2))
}

# build NAME TOOLDIR PACKAGE [LDFLAGS] builds PACKAGE from hack/tools/TOOLDIR into $BIN/NAME
# unless the stamp (pins + flags) is unchanged. With TOOL_ARCH set (e.g. arm64) it
# cross-compiles for linux/TOOL_ARCH, and NAME is then linux_TOOL_ARCH/NAME.
build() {
	local name=$1 dir=$ROOT/hack/tools/$2 pkg=$3 ldflags=${4:-} arch=${TOOL_ARCH:-}
	local sub=${1%/*} base=${1##*/} stamp tmp stampfile env=(CGO_ENABLED=0)
	[[ $sub != "$1" ]] || sub=.
	mkdir -p "$BIN/$sub"
	tmp=$BIN/$sub/.$base.$$.tmp stampfile=$BIN/$sub/.$base.stamp
	[[ -z $arch ]] || env+=(GOOS=linux GOARCH="$arch")
	stamp=$(cat "$dir/go.mod" "$dir/go.sum" <(echo "$pkg $ldflags${arch:+ $arch}") | sha256sum | cut -c1-16)
	if [[ -x $BIN/$name && "$(cat "$stampfile" 2>/dev/null)" == "$stamp" ]]; then
		say "$name: cached ($BIN/$name)"
		return
	fi
	if [[ $2 == kube* && -z $arch ]] && ((TERRAPLANE_JOB != 0)); then
		say "$name: waiting for bin/terraplane, whose compiled Kubernetes libraries it reuses"
		wait_terraplane
		[[ $name != kube-apiserver ]] || EST[kube-apiserver]=250
	fi
	progress "$name" "$pkg${arch:+ for linux/$arch} from the Go module proxy" \
		go_in "$dir" env "${env[@]}" go build -trimpath -ldflags "-s -w $ldflags" -o "$tmp" "$pkg"
	mv "$tmp" "$BIN/$name"
	echo "$stamp" >"$stampfile"
}

kube_ldflags() {
	local v=k8s.io/component-base/version major minor
	major=$(echo "${KUBE_VERSION#v}" | cut -d. -f1)
	minor=$(echo "${KUBE_VERSION#v}" | cut -d. -f2)
	echo "-X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=$major -X $v.gitMinor=$minor -X $v.gitTreeState=clean" \
		"-X $v/base.gitVersion=$KUBE_VERSION -X $v/base.gitMajor=$major -X $v/base.gitMinor=$minor"
}

install_kube() { build kube-apiserver kube k8s.io/kubernetes/cmd/kube-apiserver "$(kube_ldflags)"; }
install_kubectl() { build kubectl kube k8s.io/kubernetes/cmd/kubectl "$(kube_ldflags)"; }
# etcd shares kube's module (the version Kubernetes pins), so most of it is compiled already.
install_etcd() { build etcd kube go.etcd.io/etcd/server/v3; }
# The components of make cluster's node, from hack/tools/kubenode (the same pin as kube).
install_kubelet() { build kubelet kubenode k8s.io/kubernetes/cmd/kubelet "$(kube_ldflags)"; }
install_kube_scheduler() { build kube-scheduler kubenode k8s.io/kubernetes/cmd/kube-scheduler "$(kube_ldflags)"; }
install_kube_controller_manager() { build kube-controller-manager kubenode k8s.io/kubernetes/cmd/kube-controller-manager "$(kube_ldflags)"; }
install_kube_proxy() { build kube-proxy kubenode k8s.io/kubernetes/cmd/kube-proxy "$(kube_ldflags)"; }
install_controller_gen() { build controller-gen controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen; }
install_crd_ref_docs() { build crd-ref-docs crd-ref-docs github.com/elastic/crd-ref-docs; }
install_staticcheck() { build staticcheck staticcheck honnef.co/go/tools/cmd/staticcheck; }
install_minio() { build minio minio github.com/minio/minio; }
install_helm() { build helm helm helm.sh/helm/v3/cmd/helm; }
install_cosign() { build cosign cosign github.com/sigstore/cosign/v2/cmd/cosign; }
install_tofu() { build tofu tofu github.com/opentofu/opentofu/cmd/tofu "-X github.com/opentofu/opentofu/version.dev=no"; }
# install_tofu_arm64 cross-compiles the same OpenTofu for linux/arm64 into $BIN/linux_arm64/tofu:
# the arm64 image of make image's two-platform index bundles it.
install_tofu_arm64() { TOOL_ARCH=arm64 build linux_arm64/tofu tofu github.com/opentofu/opentofu/cmd/tofu "-X github.com/opentofu/opentofu/version.dev=no"; }

# kubectl_minor BINARY prints the minor version of a kubectl 1.x client, or nothing.
kubectl_minor() {
	"$1" version --client -o json 2>/dev/null | tr -d ' \n' |
		sed -n 's/.*"clientVersion":{"major":"1","minor":"\([0-9]*\).*/\1/p'
}

# install_kubectl_any keeps a cached kubectl, else uses one on PATH of v1.KUBECTL_MIN_MINOR
# or later, else builds the pinned one.
install_kubectl_any() {
	local found minor
	if [[ ! -x $BIN/kubectl ]] && found=$(command -v kubectl); then
		minor=$(kubectl_minor "$found")
		if [[ -n $minor ]] && ((minor >= KUBECTL_MIN_MINOR)); then
			say "kubectl: using $found (v1.$minor; make tools-test builds the pinned $KUBE_VERSION)"
			return
		fi
		say "kubectl: $found is ${minor:+v1.$minor, }older than v1.$KUBECTL_MIN_MINOR; building the pinned one"
	fi
	install_kubectl
}

# REGISTRIES are the registry hosts the mirror serves each provider under: terraform
# resolves hashicorp/aws to registry.terraform.io, OpenTofu to registry.opentofu.org.
REGISTRIES=(registry.terraform.io registry.opentofu.org)

# mirror_provider NS TYPE VERSION FILE NAME links the provider binary FILE into the mirror
# as NAME under every registry host (real directories: a symlinked host is not followed).
mirror_provider() {
	local host dir
	for host in "${REGISTRIES[@]}"; do
		dir="$MIRROR/$host/$1/$2/$3/linux_amd64"
		mkdir -p "$dir"
		ln -sf "$4" "$dir/$5"
	done
}

# install_providers mirrors the aws provider the machine image ships (the quickstart's).
install_providers() {
	local found=${TERRAPLANE_AWS_PROVIDER:-}
	if [[ -z $found ]]; then
		found=$(find /opt /usr/share /usr/local /root/.terraform.d -name "terraform-provider-aws_v${AWS_VERSION}*" -type f 2>/dev/null | head -n1 || true)
	fi
	[[ -n $found && -x $found ]] || die "the hashicorp/aws ${AWS_VERSION} provider is not on this machine; set TERRAPLANE_AWS_PROVIDER=/path/to/terraform-provider-aws_v${AWS_VERSION}_x5"
	mirror_provider hashicorp aws "$AWS_VERSION" "$found" "$(basename "$found")"
	say "providers: mirror at $MIRROR for ${REGISTRIES[*]} (aws $AWS_VERSION from $found)"
}

# install_random builds hashicorp/random (the tests' and the random bench variant's) into the mirror.
install_random() {
	build terraform-provider-random provider-random github.com/terraform-providers/terraform-provider-random
	mirror_provider hashicorp random "$RANDOM_VERSION" "$BIN/terraform-provider-random" "terraform-provider-random_v${RANDOM_VERSION}_x5"
}

# install_cloud_schemas fetches the CDK bindings of google and azurerm with npm (the
# package only, at the pinned version), turns their assemblies into provider schemas
# for the GCP and Azure modules (hack/jsiischema), and installs test/standin-provider
# with each schema into the tests' own mirror, $STANDIN_MIRROR, under the real source
# address: never into $MIRROR, from which make image takes providers.
install_cloud_schemas() {
	command -v npm >/dev/null || die "npm is not on PATH (the google and azurerm schemas come from their CDK bindings on npm)"
	local standin=$BIN/standin-provider jsiischema=$BIN/jsiischema
	(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$standin" ./test/standin-provider && CGO_ENABLED=0 go build -trimpath -o "$jsiischema" ./hack/jsiischema)
	cloud_schema google "$GOOGLE_VERSION" "$GOOGLE_BINDING" gcp
	cloud_schema azurerm "$AZURERM_VERSION" "$AZURERM_BINDING" azure
}

# cloud_schema TYPE VERSION BINDING MODULES mirrors the stand-in for hashicorp/TYPE VERSION
# with the schema of the resources tfmodules/MODULES uses.
cloud_schema() {
	local type=$1 version=$2 binding=$3 modules=$4 pkg=$CACHE/npm/provider-$1-$3 host dir stamp
	if [[ ! -f $pkg/package/.jsii ]]; then
		say "$type schema: fetching @cdktf/provider-$type@$binding with npm (generated from hashicorp/$type $version)"
		rm -rf "$pkg" && mkdir -p "$pkg"
		(cd "$pkg" && npm pack --silent "@cdktf/provider-$type@$binding" >/dev/null) || die "npm could not fetch @cdktf/provider-$type@$binding"
		tar -xzf "$pkg"/*.tgz -C "$pkg" package/.jsii package/lib package/package.json && rm -f "$pkg"/*.tgz
	fi
	stamp=$(cat "$BIN/standin-provider" "$BIN/jsiischema" "$ROOT"/tfmodules/"$modules"/*/*.tf | sha256sum | cut -c1-16)
	dir=$STANDIN_MIRROR/${REGISTRIES[0]}/hashicorp/$type/$version/linux_amd64
	if [[ "$(cat "$STANDIN_MIRROR/.$type.stamp" 2>/dev/null)" == "$stamp" && -f $dir/schema.json ]]; then
		say "$type schema: cached ($dir)"
		return
	fi
	"$BIN/jsiischema" -package "$pkg/package" -provider "hashicorp/$type" -out "$CACHE/npm/$type-$version.schema.json" "$ROOT/tfmodules/$modules"
	for host in "${REGISTRIES[@]}"; do
		dir=$STANDIN_MIRROR/$host/hashicorp/$type/$version/linux_amd64
		rm -rf "$dir" && mkdir -p "$dir"
		cp "$BIN/standin-provider" "$dir/terraform-provider-${type}_v${version}_x5"
		cp "$CACHE/npm/$type-$version.schema.json" "$dir/schema.json"
	done
	echo "$stamp" >"$STANDIN_MIRROR/.$type.stamp"
	say "$type schema: the stand-in for hashicorp/$type $version in $STANDIN_MIRROR"
}

install_terraform() {
	command -v terraform >/dev/null || die "terraform is not on PATH; install terraform >= 1.5 (the machine image ships v1.11)"
	say "terraform: $(terraform version -json 2>/dev/null | sed -n 's/.*"terraform_version": *"\([^"]*\)".*/\1/p') at $(command -v terraform)"
}

# TERRAPLANE_JOB is the process group of bin/terraplane's background build (0: none).
TERRAPLANE_JOB=0
trap '((TERRAPLANE_JOB == 0)) || kill -- -"$TERRAPLANE_JOB" 2>/dev/null || true' EXIT

# start_terraplane builds bin/terraplane (as make build does, with TERRAPLANE_LDFLAGS) in a
# background job of its own, and meanwhile downloads the modules kube-apiserver and etcd
# build from, which wait for it (see build).
start_terraplane() {
	set -m
	progress terraplane "bin/terraplane first (kube-apiserver reuses what it compiles)" go_in "$ROOT" env CGO_ENABLED=0 "${GO:-go}" build \
		-trimpath -ldflags "${TERRAPLANE_LDFLAGS:-}" -o bin/terraplane ./cmd/terraplane &
	TERRAPLANE_JOB=$!
	set +m
	(cd "$ROOT/hack/tools/kube" && go list -deps k8s.io/kubernetes/cmd/kube-apiserver go.etcd.io/etcd/server/v3 >/dev/null 2>&1 || true) &
}

# wait_terraplane waits for the background build of bin/terraplane.
wait_terraplane() {
	((TERRAPLANE_JOB != 0)) || return 0
	wait "$TERRAPLANE_JOB" || { TERRAPLANE_JOB=0; die "bin/terraplane did not build (the compiler's messages are above)"; }
	TERRAPLANE_JOB=0
}

# apt_install PACKAGE... installs Debian packages (the tests start the servers themselves);
# it fails naming the packages, with apt-get's last words, when apt-get does.
apt_install() {
	[[ $(id -u) == 0 ]] || die "installing $* needs root (apt-get)"
	local log
	log=$(mktemp)
	if ! apt-get update -qq >"$log" 2>&1 || ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >>"$log" 2>&1; then
		tail -n 5 "$log" >&2
		rm -f "$log"
		die "apt-get could not install $* (it needs a Debian package mirror; install them by hand and run this again)"
	fi
	rm -f "$log"
}

# install_node installs what make cluster's node runs besides the Kubernetes binaries:
# containerd, runc, the CNI plugins (bridge, host-local, loopback), iptables and conntrack
# for kube-proxy, from Debian; and the sandbox (pause) image, built from hack/pause.
install_node() {
	local missing=()
	{ command -v containerd && command -v ctr; } >/dev/null || missing+=(containerd)
	command -v runc >/dev/null || missing+=(runc)
	[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] || missing+=(containernetworking-plugins)
	command -v iptables >/dev/null || missing+=(iptables)
	command -v conntrack >/dev/null || missing+=(conntrack)
	if [[ ${#missing[@]} -gt 0 ]]; then
		say "node: installing the Debian packages ${missing[*]}"
		apt_install "${missing[@]}"
	fi
	install_pause
	say "node: $(containerd --version | cut -d' ' -f1,3), $(runc --version | head -n1), CNI plugins in /usr/lib/cni, $(iptables --version)"
}

# install_pause builds hack/pause statically and puts it in an image tarball with the
# project's image builder (hack/image pause); make cluster imports it into containerd.
install_pause() {
	local dir=$CACHE/images stamp
	stamp=$(cat "$ROOT/hack/pause/main.go" "$ROOT/internal/image/static.go" "$ROOT/internal/image/layers.go" | sha256sum | cut -c1-16)
	if [[ -f $dir/pause.tar && "$(cat "$dir/.pause.stamp" 2>/dev/null)" == "$stamp" ]]; then
		say "pause image: cached ($dir/pause.tar)"
		return
	fi
	mkdir -p "$dir"
	(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir/pause" ./hack/pause &&
		go run ./hack/image pause -binary "$dir/pause" -out "$dir/pause.tar.tmp")
	mv "$dir/pause.tar.tmp" "$dir/pause.tar"
	echo "$stamp" >"$dir/.pause.stamp"
	say "pause image: built $dir/pause.tar"
}

install_postgres() {
	if ! command -v initdb >/dev/null && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || ! command -v psql >/dev/null || ! id postgres >/dev/null 2>&1; then
		say "postgres: installing the Debian packages"
		apt_install postgresql postgresql-client
	fi
	say "postgres: $(psql --version)"
}

install_mariadb() {
	if ! command -v mariadb >/dev/null || ! { command -v mariadbd >/dev/null || [[ -x /usr/sbin/mariadbd ]]; }; then
		say "mariadb: installing the Debian packages (one-off)"
		apt_install mariadb-server mariadb-client
	fi
	say "mariadb: $(mariadb --version)"
}

# install_moto checks for moto_server, the AWS API emulator: the quickstart's S3 endpoint
# and the tests' STS and IAM.
install_moto() {
	if ! command -v moto_server >/dev/null; then
		say "moto: installing the Debian package (the machine image normally ships moto_server)"
		apt_install python3-moto
	fi
	command -v moto_server >/dev/null || die "moto_server (the AWS API emulator, Python moto 5) is not on PATH and could not be installed"
	say "moto: $(command -v moto_server)"
}

targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(terraform providers moto kubectl-any kube etcd)
# bin/terraplane starts first, whatever its place in the list.
for t in "${targets[@]}"; do [[ $t != terraplane ]] || start_terraplane; done
for t in "${targets[@]}"; do
	case $t in
	terraplane) ;;
	kube) install_kube ;;
	kubectl) install_kubectl ;;
	kubectl-any) install_kubectl_any ;;
	kubelet) install_kubelet ;;
	kube-scheduler) install_kube_scheduler ;;
	kube-controller-manager) install_kube_controller_manager ;;
	kube-proxy) install_kube_proxy ;;
	node) install_node ;;
	cluster)
		install_etcd
		install_kube
		install_kubectl
		install_kubelet
		install_kube_scheduler
		install_kube_controller_manager
		install_kube_proxy
		install_node
		;;
	etcd) install_etcd ;;
	controller-gen) install_controller_gen ;;
	crd-ref-docs) install_crd_ref_docs ;;
	staticcheck) install_staticcheck ;;
	minio) install_minio ;;
	helm) install_helm ;;
	cosign) install_cosign ;;
	providers) install_providers ;;
	random) install_random ;;
	cloud-schemas) install_cloud_schemas ;;
	terraform) install_terraform ;;
	tofu) install_tofu ;;
	tofu-arm64) install_tofu_arm64 ;;
	moto) install_moto ;;
	postgres) install_postgres ;;
	mariadb) install_mariadb ;;
	*) die "unknown tool $t" ;;
	esac
done
wait_terraplane
