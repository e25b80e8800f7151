# Terraplane — make run starts a local control plane with the quickstart; make test runs every test.
SHELL := /bin/bash
CACHE ?= $(HOME)/.cache/terraplane
TOOLS := $(CACHE)/bin
export TERRAPLANE_CACHE := $(CACHE)
export KUBEBUILDER_ASSETS := $(TOOLS)
GO ?= go
TEST_TIMEOUT ?= 60m
# The end-to-end tests that run a second time with OpenTofu in place of terraform.
TOFU_TESTS := TestBucketLifecycle|TestModuleAsClass|TestMigrateAndExport|TestPostgreSQLLifecycle|TestMySQLLifecycle
# The provider versions the bundled modules' dependency locks hold: the toolchain's pins.
# google and azurerm: the versions the GCP and Azure modules are tested against (their stand-ins).
PROVIDER_PINS := hashicorp/aws=$(shell sed -n 's/^AWS_VERSION=//p' hack/install-tools.sh),hashicorp/random=$(shell sed -n 's/^RANDOM_VERSION=//p' hack/install-tools.sh),$\
	hashicorp/google=$(shell sed -n 's/^GOOGLE_VERSION=//p' hack/install-tools.sh),hashicorp/azurerm=$(shell sed -n 's/^AZURERM_VERSION=//p' hack/install-tools.sh)
# The providers whose kinds make test-cloud-plan plans (google, azurerm or both, | between).
CLOUD_PLAN ?= google|azurerm

# VERSION is what terraplane version prints and the image and chart are labelled with.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
VERSION := $(VERSION)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE ?= $(shell git config --get remote.origin.url 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION)

IMAGE_TAG ?= dev
IMAGE_OUT ?= bin/image
RELEASE_OUT ?= bin/release
# TERRAFORM is the binary the image bundles: OpenTofu (MPL-2.0), built for every platform,
# or terraform (BUSL-1.1; docs/install.md says what that means), this machine's, linux/amd64 only.
# PLATFORMS are linux/amd64 and linux/arm64 with OpenTofu and no PROVIDERS (the provider
# mirror holds linux/amd64 only), else linux/amd64.
TERRAFORM ?= tofu
PLATFORMS ?= $(if $(and $(filter tofu,$(TERRAFORM)),$(if $(PROVIDERS),,yes)),linux/amd64$(comma)linux/arm64,linux/amd64)
comma := ,

.PHONY: cluster cluster-stop image image-push release all build generate manifests tools tools-test run test test-tofu test-cloud-plan unit lint integration e2e bench chaos fuzz fmt vet clean

all: build

## build: compile bin/terraplane
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/terraplane ./cmd/terraplane

## image: build the container image (no container engine) into bin/image: an index of one image per
## platform, each with terraplane and OpenTofu: make image [PROVIDERS=aws,random] [TERRAFORM=terraform] [PLATFORMS=linux/amd64] [IMAGE_TAG=dev]
## (OpenTofu for linux/amd64 and linux/arm64 comes from hack/install-tools.sh tofu tofu-arm64; TERRAFORM=terraform
## bundles this machine's terraform, for linux/amd64 only; providers come from $(CACHE)/providers: aws with make
## tools, random with make tools-test, for linux/amd64 only)
image:
	$(if $(filter tofu,$(TERRAFORM)),hack/install-tools.sh tofu $(if $(findstring linux/arm64,$(PLATFORMS)),tofu-arm64))
	for p in $(subst $(comma), ,$(PLATFORMS)); do \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $(IMAGE_OUT)/$${p%/*}_$${p#*/}/terraplane ./cmd/terraplane || exit 1; \
	done
	$(GO) run ./hack/image build -platforms $(PLATFORMS) -terraplane '$(IMAGE_OUT)/linux_{arch}/terraplane' -terraform $(TERRAFORM) \
		-providers "$(PROVIDERS)" -mirror $(CACHE)/providers -version "$(VERSION)" -revision "$(REVISION)" -source "$(SOURCE)" \
		-tag terraplane:$(IMAGE_TAG) -out $(IMAGE_OUT)

## image-push: push the image to a registry: make image-push REGISTRY=registry.example.com/platform [IMAGE_TAG=v0.1.0]
image-push: image
	@[ -n "$(REGISTRY)" ] || { echo "set REGISTRY, e.g. make image-push REGISTRY=registry.example.com/platform" >&2; exit 1; }
	$(GO) run ./hack/image push -layout $(IMAGE_OUT)/oci -to $(REGISTRY)/terraplane:$(IMAGE_TAG)

# BUILDER is the provenance's builder id: a URI naming what runs make release (CI: its run's address).
BUILDER ?= local:make-release

## release: the image tagged $(VERSION) (git describe) for every platform, as an OCI layout and a tarball in
## bin/release/image, the chart packaged at that version (bin/release/terraplane-*.tgz), an SPDX SBOM of each
## image (bin/release/sbom) and the build's provenance; with REGISTRY, all pushed there, the index, images and
## chart signed with COSIGN_KEY (a PEM private key; COSIGN_PASSWORD in the environment for cosign's encrypted
## keys; without one, an ephemeral key), the SBOMs and provenance attached as cosign does; the public key is
## bin/release/cosign.pub: make release [REGISTRY=registry.example.com/platform] [COSIGN_KEY=cosign.key] [TERRAFORM=terraform] [PROVIDERS=aws]
release: RELEASE_STARTED := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
release:
	hack/install-tools.sh helm
	$(MAKE) image VERSION=$(VERSION) IMAGE_TAG=$(VERSION) IMAGE_OUT=$(RELEASE_OUT)/image
	$(GO) run ./hack/release -version $(VERSION) -layout $(RELEASE_OUT)/image/oci -out $(RELEASE_OUT) -helm $(TOOLS)/helm $(if $(REGISTRY),-registry $(REGISTRY)) \
		-key "$(COSIGN_KEY)" -builder "$(BUILDER)" -source "$(SOURCE)" -revision "$(REVISION)" -started "$(RELEASE_STARTED)" \
		-command "make release$(if $(REGISTRY), REGISTRY=$(REGISTRY)) TERRAFORM=$(TERRAFORM) PLATFORMS=$(PLATFORMS)$(if $(PROVIDERS), PROVIDERS=$(PROVIDERS))"

# RUN_TOOLS are what make run needs: terraform and the aws provider (found on the machine),
# moto_server (the quickstart's S3), kube-apiserver and etcd (built), a kubectl (one on
# PATH from v1.30 on, else built), and the random provider (built) that the demo cloud's
# clusters (KubernetesClusterClass demo/local) use.
RUN_TOOLS := terraform providers moto kubectl-any kube etcd random

## tools: install what make run needs into $(CACHE): kube-apiserver and etcd, the aws
## provider mirror, moto_server and a kubectl
tools:
	hack/install-tools.sh $(RUN_TOOLS)

## tools-test: everything the tests need: what tools installs, plus the pinned kubectl,
## MinIO, the random provider, helm, OpenTofu (for linux/amd64 and linux/arm64, the image's),
## PostgreSQL, MariaDB, the node of make cluster, the google and azurerm schemas with the
## stand-in provider that serves them to the tests (cloud-schemas), and cosign, with which
## the release tests check signatures as a security team does
tools-test: tools
	hack/install-tools.sh kubectl minio random helm tofu tofu-arm64 postgres mariadb cluster cloud-schemas cosign

## cluster: a real one-node Kubernetes cluster on this machine (needs root): containerd,
## etcd, kube-apiserver, controller manager, scheduler, kubelet and kube-proxy on 10.254.0.1
## (an address on lo); data under .terraplane/cluster, kubeconfig .terraplane/cluster/kubeconfig
cluster:
	hack/install-tools.sh cluster
	$(GO) run ./hack/cluster start

## cluster-stop: stop it: every process, mount, iptables rule and kernel setting it made
cluster-stop:
	$(GO) run ./hack/cluster stop

# BETA_CRDS are served at v1beta1 beside v1alpha1, with the same schema (docs/api-stability.md)
BETA_CRDS = buckets.storage.terraplane.io bucketclasses.storage.terraplane.io \
	postgresqlinstances.database.terraplane.io postgresqlinstanceclasses.database.terraplane.io \
	s3bucketclasses.storage.aws.terraplane.io modules.terraform.terraplane.io moduleclasses.terraform.terraplane.io

## generate: managed kinds' boilerplate (hack/kindgen), deepcopy functions and CRDs from kubebuilder markers,
## the API reference in docs/api (crd-ref-docs, hack/api-docs), and the bundled modules' dependency
## locks with docs/provider-locks.md (hack/providerlocks, from the pinned providers in the mirror)
generate:
	hack/install-tools.sh controller-gen crd-ref-docs terraform providers random cloud-schemas
	$(GO) run ./hack/kindgen apis
	$(TOOLS)/controller-gen object paths=./apis/...
	$(TOOLS)/controller-gen crd paths=./apis/... output:crd:artifacts:config=config/crd/bases
	$(GO) run ./hack/crdversions config/crd/bases $(BETA_CRDS)
	$(TOOLS)/controller-gen rbac:roleName=terraplane-manager paths=./internal/app/... output:rbac:artifacts:config=config/rbac
	$(TOOLS)/controller-gen rbac:roleName=terraplane-stacks paths=./controllers/stack/... output:rbac:artifacts:config=config/rbac/stacks
	$(TOOLS)/controller-gen rbac:roleName=terraplane-namespace paths=./config/rbac/namespace/... output:rbac:artifacts:config=config/rbac/namespace
	{ echo "resources:"; for f in config/crd/bases/*.yaml; do echo "  - bases/$${f##*/}"; done; } > config/crd/kustomization.yaml
	rm -rf charts/terraplane/crds && mkdir -p charts/terraplane/templates/crds && rm -f charts/terraplane/templates/crds/*.yaml
	for f in config/crd/bases/*.yaml; do { echo '# Generated by make generate from config/crd/bases: the chart applies it on install and upgrade, and keeps it on uninstall.'; \
		sed '0,/^  annotations:$$/s//  annotations:\n    helm.sh\/resource-policy: keep/' $$f; } > charts/terraplane/templates/crds/$${f##*/}; done
	{ printf '%s\n' '# Generated by make generate from config/rbac/role.yaml.' 'apiVersion: rbac.authorization.k8s.io/v1' 'kind: ClusterRole' \
		'metadata:' '  name: {{ include "terraplane.fullname" . }}-manager' '  labels:' '    {{- include "terraplane.labels" . | nindent 4 }}'; \
		sed -n '/^rules:/,$$p' config/rbac/role.yaml; } > charts/terraplane/templates/clusterrole.yaml
	{ printf '%s\n' '# Generated by make generate from config/rbac/stacks/role.yaml.' '{{- if .Values.stackManager.enabled }}' 'apiVersion: rbac.authorization.k8s.io/v1' \
		'kind: ClusterRole' 'metadata:' '  name: {{ include "terraplane.fullname" . }}-stacks' '  labels:' '    {{- include "terraplane.labels" . | nindent 4 }}'; \
		sed -n '/^rules:/,$$p' config/rbac/stacks/role.yaml; echo '{{- end }}'; } > charts/terraplane/templates/clusterrole-stacks.yaml
	{ printf '%s\n' '# Generated by make generate from config/rbac/namespace/role.yaml.' 'apiVersion: rbac.authorization.k8s.io/v1' 'kind: ClusterRole' \
		'metadata:' '  name: {{ include "terraplane.fullname" . }}-namespace' '  labels:' '    {{- include "terraplane.labels" . | nindent 4 }}'; \
		sed -n '/^rules:/,$$p' config/rbac/namespace/role.yaml; } > charts/terraplane/templates/clusterrole-namespace.yaml
	hack/api-docs/generate.sh
	$(GO) run ./hack/providerlocks -mirror $(CACHE)/providers,$(CACHE)/standin-providers -pins $(PROVIDER_PINS) tfmodules docs/provider-locks.md

## run: build bin/terraplane (make build's command, in the background) while installing what
## running needs (kube-apiserver waits for it, to reuse what it compiled), then start the
## dev control plane and the quickstart
run:
	GO=$(GO) TERRAPLANE_LDFLAGS="$(LDFLAGS)" hack/install-tools.sh terraplane $(RUN_TOOLS)
	bin/terraplane dev --kubeconfig-out .terraplane/kubeconfig --quickstart examples/quickstart

## test: hygiene checks, then unit, integration (envtest) and end-to-end tests (the GCP
## and Azure kinds on the stand-in providers among them), then the end-to-end subset
## again with OpenTofu, and the GCP and Azure plans with the real providers where the
## mirror holds them (make test-cloud-plan)
test: tools-test lint
	hack/gotest.sh -count=1 -timeout $(TEST_TIMEOUT) ./...
	$(MAKE) test-tofu
	@present=$$(for p in google azurerm; do [ -d $(CACHE)/providers/registry.terraform.io/hashicorp/$$p ] && echo $$p; done | paste -sd'|'); \
	if [ -n "$$present" ]; then $(MAKE) test-cloud-plan CLOUD_PLAN="$$present" || exit 1; fi

## test-tofu: the quickstart bucket, a ModuleClass claim, migrate/export and the database
## modules with OpenTofu (built by tools-test) in place of terraform
test-tofu:
	@test -x $(TOOLS)/tofu || { echo "OpenTofu is missing: run make tools-test" >&2; exit 1; }
	TERRAPLANE_TERRAFORM=$(TOOLS)/tofu TEST_LOG=.terraplane/test-tofu.log hack/gotest.sh -count=1 -timeout 20m -run '^($(TOFU_TESTS))$$' ./test/e2e/

## test-cloud-plan: plan every GCP and Azure kind with the real google and azurerm
## providers from $(CACHE)/providers; fails naming the mirror while they are not there
## (azurerm also needs ARM_SUBSCRIPTION_ID, ARM_TENANT_ID, ARM_CLIENT_ID, ARM_CLIENT_SECRET)
test-cloud-plan:
	$(GO) test -count=1 -timeout 30m -tags cloudplan -run '^TestCloudModulesPlan$$/^($(CLOUD_PLAN))$$' -v ./internal/kinds/

## lint: gofmt, go mod tidy, go vet and staticcheck (pinned in hack/tools/staticcheck)
lint:
	hack/install-tools.sh staticcheck
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted (run make fmt)" >&2; exit 1; fi
	$(GO) mod tidy -diff
	hack/tools/align.sh --check
	$(GO) vet ./...
	$(GO) vet -tags cloudplan ./internal/kinds/
	$(TOOLS)/staticcheck ./...

## unit: only the tests that need no tools
unit:
	$(GO) test -count=1 -short ./...

## bench: side-by-side benchmark against one hand-written workspace and raw terraform, from a cold controller, in-process and with runner pools (not part of make test): make bench [N=1,10,50] [VARIANTS=aws-s3] [SIDES=single,raw,terraplane,runner] [REPLICAS=3] [RAW_SAMPLE=1000: the raw side runs that many workspaces and scales them to N; the last N is left to the teardown] [POLICIES=5: that many plan policies installed, every plan checked] [CONTROL_PLANE_CPUS=1: the API server, etcd and the bench on that many CPUs, controllers and terraform on the rest]
bench: tools build
	hack/install-tools.sh minio random
	$(GO) run ./bench $(if $(N),-n $(N)) $(if $(VARIANTS),-variants $(VARIANTS)) $(if $(SIDES),-sides $(SIDES)) $(if $(REPLICAS),-replicas $(REPLICAS)) $(if $(RAW_SAMPLE),-raw-sample $(RAW_SAMPLE) -keep-last) $(if $(POLICIES),-policies $(POLICIES)) $(if $(CONTROL_PLANE_CPUS),-control-plane-cpus $(CONTROL_PLANE_CPUS))

## fuzz: fuzz the workspace renderer (make test runs its seed corpus): make fuzz [FUZZTIME=5m]
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(or $(FUZZTIME),2m) ./internal/render/

## chaos: the fault-injection test at length (make test runs it with 30 kills): make chaos N=200 [SEED=42]
chaos: tools
	hack/install-tools.sh postgres
	CHAOS_KILLS=$(or $(N),100) $(if $(SEED),CHAOS_SEED=$(SEED)) $(GO) test -count=1 -timeout 120m -run TestChaos -v ./test/chaos/

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin .terraplane
