package engine

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"

	"terraplane.io/terraplane/internal/plugins"
)

// mirrorWith makes an unpacked filesystem mirror holding an executable for each
// address@version, and returns it with the binaries' paths by address.
func mirrorWith(t *testing.T, versions map[string]string) (string, map[string]string) {
	t.Helper()
	mirror := t.TempDir()
	bins := map[string]string{}
	for address, version := range versions {
		dir := filepath.Join(mirror, filepath.FromSlash(address), version, runtime.GOOS+"_"+runtime.GOARCH)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, "terraform-provider-"+filepath.Base(address)+"_v"+version+"_x5")
		if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		bins[address] = bin
	}
	return mirror, bins
}

func TestPinnedProviders(t *testing.T) {
	const aws, random = "registry.terraform.io/hashicorp/aws", "registry.terraform.io/hashicorp/random"
	mirror, bins := mirrorWith(t, map[string]string{aws: "5.100.0", random: "3.9.0"})
	root := func(version string) []byte {
		return []byte(`{"terraform":{"required_providers":{"aws":{"source":"hashicorp/aws","version":"` + version + `"}}}}`)
	}
	lock := []byte("provider \"" + aws + "\" {\n  version = \"5.100.0\"\n  hashes = []\n}\n")
	lockBoth := append([]byte("provider \""+random+"\" {\n  version = \"3.9.0\"\n}\n"), lock...)
	localModule := []byte(`
terraform {
  required_providers {
    aws = { source = "hashicorp/aws" }
  }
}
module "inner" { source = "./inner" }
resource "aws_iam_user_policy" "this" {
  name   = "p"
  user   = "u"
  policy = jsonencode({ Resource = "${aws_s3_bucket.this.arn}/*" })
}
`)
	both := []plugins.Provider{{Address: aws, Binary: bins[aws]}, {Address: random, Binary: bins[random]}}
	for _, tc := range []struct {
		name   string
		mirror string
		ws     Workspace
		want   []plugins.Provider
	}{
		{"an exact version", mirror, Workspace{Files: map[string][]byte{rootFile: root("5.100.0")}},
			[]plugins.Provider{{Address: aws, Binary: bins[aws]}}},
		{"an exact version with =", mirror, Workspace{Files: map[string][]byte{rootFile: root("= 5.100.0")}},
			[]plugins.Provider{{Address: aws, Binary: bins[aws]}}},
		{"a range, pinned by the lock", mirror, Workspace{Files: map[string][]byte{rootFile: root(">= 5.0")}, Lock: lock},
			[]plugins.Provider{{Address: aws, Binary: bins[aws]}}},
		{"a local module requiring the same provider", mirror,
			Workspace{Files: map[string][]byte{rootFile: root("5.100.0"), "module/main.tf": localModule}},
			[]plugins.Provider{{Address: aws, Binary: bins[aws]}}},
		{"a provider a resource implies, pinned by the lock", mirror, Workspace{Files: map[string][]byte{rootFile: root("5.100.0"),
			"module/main.tf": []byte(`resource "random_pet" "p" {}`)}, Lock: lockBoth}, both},
		{"a provider a resource implies, not pinned", mirror, Workspace{Files: map[string][]byte{rootFile: root("5.100.0"),
			"module/main.tf": []byte(`resource "random_pet" "p" {}`)}}, nil},
		{"a range, no lock", mirror, Workspace{Files: map[string][]byte{rootFile: root(">= 5.0")}}, nil},
		{"a module in JSON", mirror, Workspace{Files: map[string][]byte{rootFile: root("5.100.0"),
			"module/main.tf.json": []byte(`{"module":{"b":{"source":"git::https://example.com/m.git"}}}`)}}, nil},
		{"a version the mirror lacks", mirror, Workspace{Files: map[string][]byte{rootFile: root("5.99.0")}}, nil},
		{"no mirror", "", Workspace{Files: map[string][]byte{rootFile: root("5.100.0")}}, nil},
		{"a module file requiring another provider", mirror, Workspace{Files: map[string][]byte{rootFile: root("5.100.0"),
			"module/versions.tf": []byte("terraform {\n  required_providers {\n    random = { source = \"hashicorp/random\" }\n  }\n}\n")}}, nil},
		{"a module init must fetch", mirror, Workspace{Files: map[string][]byte{rootFile: root("5.100.0"),
			"module/main.tf": []byte(`module "b" { source = "terraform-aws-modules/s3-bucket/aws" }`)}}, nil},
		{"an unreadable lock", mirror, Workspace{Files: map[string][]byte{rootFile: root("5.100.0")}, Lock: []byte("provider {")}, nil},
		{"an unreadable module", mirror, Workspace{Files: map[string][]byte{rootFile: root("5.100.0"),
			"module/main.tf": []byte(`resource "x" {`)}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pinnedProviders(tc.mirror, tc.ws)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// acquisition is one Acquire a recordingPool saw.
type acquisition struct {
	providers []plugins.Provider
	types     []string
	installed bool // init had installed the workspace's providers already
}

// recordingPool records each Acquire, and whether the workspace dir's init had installed
// its providers by then.
type recordingPool struct {
	ProviderPool
	dir  string
	mu   sync.Mutex
	seen []acquisition
}

func (p *recordingPool) Acquire(ctx context.Context, providers []plugins.Provider, env map[string]string, config []byte, types []string) (*plugins.Lease, error) {
	_, err := os.Stat(filepath.Join(p.dir, dataDir, "providers"))
	p.mu.Lock()
	p.seen = append(p.seen, acquisition{providers: providers, types: types, installed: err == nil})
	p.mu.Unlock()
	return p.ProviderPool.Acquire(ctx, providers, env, config, types)
}

// TestProvidersStartWhileInitRuns: a workspace that must init, and pins its provider,
// has the provider's process started before init installs it, and its run is lent that
// same process; a workspace already initialised asks once.
func TestProvidersStartWhileInitRuns(t *testing.T) {
	e := reuseEngine(t)
	ctx := context.Background()
	ws := Workspace{ID: "early", Files: map[string][]byte{rootFile: []byte(`{
		"terraform": {"required_providers": {"random": {"source": "hashicorp/random", "version": "3.9.0"}}},
		"resource": {"random_pet": {"p": {}}}}`)}}
	pool := &recordingPool{ProviderPool: e.plugins, dir: e.Dir(ws.ID)}
	e.plugins = pool
	if _, err := e.Create(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if len(pool.seen) != 2 {
		t.Fatalf("a create that runs init asked for providers %d times, want 2 (early, then for the run)", len(pool.seen))
	}
	early, run := pool.seen[0], pool.seen[1]
	if early.installed || !run.installed {
		t.Fatalf("the early ask came after init installed the providers (%v), or the run's before (%v)", early.installed, !run.installed)
	}
	if !reflect.DeepEqual(early.providers, run.providers) || !slices.Equal(early.types, run.types) {
		t.Fatalf("the early ask (%v %v) differs from the run's (%v %v)", early.providers, early.types, run.providers, run.types)
	}
	if got := pool.Started(); got != 1 {
		t.Fatalf("%d provider processes started, want 1: the run is lent the one started early", got)
	}
	if _, err := e.Plan(ctx, ws, PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(pool.seen) != 3 {
		t.Fatalf("a plan of an initialised workspace asked for providers %d times, want 1", len(pool.seen)-2)
	}
}
