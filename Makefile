# Terraplane — make run starts a local control plane with the quickstart; make test runs every test.
SHELL := /bin/bash
CACHE ?= $(HOME)/.cache/terraplane
TOOLS := $(CACHE)/bin
export TERRAPLANE_CACHE := $(CACHE)
export KUBEBUILDER_ASSETS := $(TOOLS)
GO ?= go
TEST_TIMEOUT ?= 40m

IMAGE_TAG ?= dev
TERRAFORM ?= terraform

.PHONY: image image-push all build generate manifests tools tools-test run test unit lint integration e2e bench chaos fmt vet clean

all: build

## build: compile bin/terraplane
build:
	$(GO) build -o bin/terraplane ./cmd/terraplane

## image: build the container image (no container engine) into bin/image: make image [PROVIDERS=aws,random] [TERRAFORM=tofu] [IMAGE_TAG=dev]
image:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o bin/image/terraplane ./cmd/terraplane
	$(GO) run ./hack/image build -terraplane bin/image/terraplane -terraform $(TERRAFORM) -providers "$(PROVIDERS)" \
		-mirror $(CACHE)/providers -tag terraplane:$(IMAGE_TAG) -out bin/image

## image-push: push the image to a registry: make image-push REGISTRY=registry.example.com/platform [IMAGE_TAG=v0.1.0]
image-push: image
	@[ -n "$(REGISTRY)" ] || { echo "set REGISTRY, e.g. make image-push REGISTRY=registry.example.com/platform" >&2; exit 1; }
	$(GO) run ./hack/image push -layout bin/image/oci -to $(REGISTRY)/terraplane:$(IMAGE_TAG)

## tools: install kube-apiserver, etcd, kubectl, controller-gen, providers and MinIO into $(CACHE)
tools:
	hack/install-tools.sh terraform providers etcd kube kubectl controller-gen minio

## tools-test: everything the tests need: what tools installs, plus helm, PostgreSQL and MariaDB
tools-test: tools
	hack/install-tools.sh helm postgres mariadb

## generate: deepcopy functions and CRDs from kubebuilder markers
generate:
	hack/install-tools.sh controller-gen
	$(TOOLS)/controller-gen object paths=./apis/...
	$(TOOLS)/controller-gen crd paths=./apis/... output:crd:artifacts:config=config/crd/bases
	$(TOOLS)/controller-gen rbac:roleName=terraplane-manager paths=./internal/app/... output:rbac:artifacts:config=config/rbac
	{ echo "resources:"; for f in config/crd/bases/*.yaml; do echo "  - bases/$${f##*/}"; done; } > config/crd/kustomization.yaml

## run: install the toolchain, build, start the dev control plane and the quickstart
run: tools build
	bin/terraplane dev --kubeconfig-out .terraplane/kubeconfig --quickstart examples/quickstart

## test: hygiene checks, then unit, integration (envtest) and end-to-end tests
test: tools-test lint
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

## lint: gofmt, go mod tidy, go vet and staticcheck (pinned in hack/tools/staticcheck)
lint:
	hack/install-tools.sh staticcheck
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted (run make fmt)" >&2; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) vet ./...
	$(TOOLS)/staticcheck ./...

## unit: only the tests that need no tools
unit:
	$(GO) test -count=1 -short ./...

## bench: side-by-side benchmark against raw terraform (not part of make test)
bench: tools build
	$(GO) run ./bench $(if $(N),-n $(N))

## chaos: the fault-injection test at length (make test runs it with 30 kills): make chaos N=200 [SEED=42]
chaos: tools
	CHAOS_KILLS=$(or $(N),100) $(if $(SEED),CHAOS_SEED=$(SEED)) $(GO) test -count=1 -timeout 120m -run TestChaos -v ./test/chaos/

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin .terraplane
