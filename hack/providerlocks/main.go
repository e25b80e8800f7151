// Command providerlocks writes the dependency lock of every bundled module
// (tfmodules/<provider>/<kind>/.terraform.lock.hcl) and docs/provider-locks.md, which
// lists what each module locks and what it could not.
//
// Locks are made with `terraform providers lock` against a filesystem mirror of exactly
// the provider versions the toolchain pins (-pins, from hack/install-tools.sh), so that the
// result depends on the pins alone, not on whatever else a machine's mirror holds. The
// google and azurerm pins are the versions whose schemas the tests check the modules
// against (test/standin-provider, in the tests' mirror): terraform needs a package of the
// version to lock it, and records no checksum of it here. A provider without a pin is
// left unlocked; its module's lock, if it has one, says so in a comment.
//
// The committed locks fix versions, not checksums: the toolchain builds the random
// provider from source, so its checksum depends on the Go toolchain that built it, and a
// lock must hold for every platform and provider source (an official registry, a network
// mirror). Terraform records the checksums of what it installs at a workspace's first init,
// and the resource keeps them from then on.
//
//	go run ./hack/providerlocks -mirror ~/.cache/terraplane/providers,~/.cache/terraplane/standin-providers \
//	  -pins hashicorp/aws=5.100.0,hashicorp/random=3.9.0,hashicorp/google=6.50.0,hashicorp/azurerm=4.55.0 \
//	  tfmodules docs/provider-locks.md
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/go-version"

	"terraplane.io/terraplane/internal/module"
)

// host is the registry the bundled modules' provider sources mean.
const host = module.DefaultRegistry + "/"

func main() {
	mirror := flag.String("mirror", "", "filesystem mirrors holding the pinned providers, comma-separated")
	pinList := flag.String("pins", "", "provider=version pairs, comma-separated (hashicorp/aws=5.100.0,...)")
	platforms := flag.String("platforms", "linux_amd64", "platforms whose checksums the locks record, comma-separated")
	flag.Parse()
	if flag.NArg() != 2 || *mirror == "" || *pinList == "" {
		fmt.Fprintln(os.Stderr, "usage: providerlocks -mirror DIR -pins P=V,... [-platforms linux_amd64,...] TFMODULES_DIR REPORT.md")
		os.Exit(2)
	}
	if err := run(*mirror, *pinList, strings.Split(*platforms, ","), flag.Arg(0), flag.Arg(1)); err != nil {
		fmt.Fprintln(os.Stderr, "providerlocks:", err)
		os.Exit(1)
	}
}

// result is what one module's lock holds and what it leaves out.
type result struct {
	dir      string
	locked   []string // "hashicorp/aws 5.100.0"
	unlocked []string // "hashicorp/google (~> 6.0)"
}

func run(mirror, pinList string, platforms []string, root, report string) error {
	pins, err := parsePins(pinList)
	if err != nil {
		return err
	}
	pinned, err := os.MkdirTemp("", "providerlocks-mirror-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(pinned)
	if err := pinnedMirror(mirror, pinned, pins, platforms); err != nil {
		return err
	}
	dirs, err := moduleDirs(root)
	if err != nil {
		return err
	}
	var results []result
	for _, dir := range dirs {
		r, err := lockModule(root, dir, pinned, pins, platforms)
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		results = append(results, r)
	}
	return os.WriteFile(report, []byte(reportText(results, pins, platforms)), 0o644)
}

// parsePins reads "ns/type=version" pairs.
func parsePins(list string) (map[string]string, error) {
	pins := map[string]string{}
	for _, p := range strings.Split(list, ",") {
		name, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || strings.Count(name, "/") != 1 || v == "" {
			return nil, fmt.Errorf("pin %q: want namespace/type=version", p)
		}
		pins[name] = v
	}
	return pins, nil
}

// pinnedMirror makes dst a filesystem mirror of the pinned versions only, linking the
// provider files of the first of srcs (comma-separated) that holds each (unpacked
// layout: host/ns/type/version/os_arch/files).
func pinnedMirror(srcs, dst string, pins map[string]string, platforms []string) error {
	for name, v := range pins {
		for _, platform := range platforms {
			var from string
			var entries []os.DirEntry
			err := fmt.Errorf("no mirror given")
			for _, src := range strings.Split(srcs, ",") {
				from = filepath.Join(src, host+name, v, platform)
				if entries, err = os.ReadDir(from); err == nil {
					break
				}
			}
			if err != nil {
				return fmt.Errorf("the pinned %s %s for %s is not in the mirrors %s (make tools-test installs them): %w", name, v, platform, srcs, err)
			}
			to := filepath.Join(dst, host+name, v, platform)
			if err := os.MkdirAll(to, 0o755); err != nil {
				return err
			}
			for _, e := range entries {
				target, err := filepath.EvalSymlinks(filepath.Join(from, e.Name()))
				if err != nil {
					return err
				}
				if err := os.Symlink(target, filepath.Join(to, e.Name())); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// moduleDirs are the bundled modules: the directories <provider>/<kind> under root.
func moduleDirs(root string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(root, "*", "*", "versions.tf"))
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, m := range matches {
		rel, _ := filepath.Rel(root, filepath.Dir(m))
		dirs = append(dirs, filepath.ToSlash(rel))
	}
	sort.Strings(dirs)
	return dirs, nil
}

// lockModule writes dir's lock with the pinned providers it requires (none: no lock).
func lockModule(root, dir, mirror string, pins map[string]string, platforms []string) (result, error) {
	res := result{dir: dir}
	mod, err := module.Load(os.DirFS(root), dir)
	if err != nil {
		return res, err
	}
	reqs, err := module.RequiredProviders(mod.Files)
	if err != nil {
		return res, err
	}
	var sources []string
	for _, req := range reqs {
		name := strings.TrimPrefix(req.Source, host)
		v, ok := pins[name]
		if !ok {
			res.unlocked = append(res.unlocked, fmt.Sprintf("%s (%s)", name, req.Constraints))
			continue
		}
		if err := meets(v, req.Constraints); err != nil {
			return res, fmt.Errorf("%s: %w", name, err)
		}
		sources = append(sources, name)
		res.locked = append(res.locked, name+" "+v)
	}
	path := filepath.Join(root, filepath.FromSlash(dir), module.LockFile)
	if len(sources) == 0 {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return res, err
		}
		return res, nil
	}
	lock, err := providersLock(mod.Files, mirror, sources, platforms)
	if err != nil {
		return res, err
	}
	return res, os.WriteFile(path, append([]byte(header(res)), lock...), 0o644)
}

// meets checks the pinned version v against the module's constraints.
func meets(v, constraints string) error {
	if constraints == "" {
		return nil
	}
	c, err := version.NewConstraint(constraints)
	if err != nil {
		return err
	}
	if !c.Check(version.Must(version.NewVersion(v))) {
		return fmt.Errorf("the toolchain's version %s does not meet the module's constraint %s", v, constraints)
	}
	return nil
}

// providersLock runs `terraform providers lock` for sources in a copy of the module.
func providersLock(files map[string][]byte, mirror string, sources, platforms []string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "providerlocks-module-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			return nil, err
		}
	}
	args := []string{"providers", "lock", "-no-color", "-fs-mirror=" + mirror}
	for _, p := range platforms {
		args = append(args, "-platform="+p)
	}
	cmd := exec.Command("terraform", append(args, sources...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("terraform providers lock: %w\n%s", err, out)
	}
	lock, err := os.ReadFile(filepath.Join(dir, module.LockFile))
	lock = hashes.ReplaceAll(lock, nil)
	return initHeader.ReplaceAll(lock, nil), err
}

// initHeader is the header terraform writes, which make generate's replaces.
var initHeader = regexp.MustCompile(`(?m)^# (This file is maintained automatically by|Manual edits may be lost).*\n`)

// hashes matches the checksums of one provider block of a lock, with their line.
var hashes = regexp.MustCompile(`(?m)^  hashes = \[\n(?:    "[^"\n]*",\n)*  \]\n`)

// header says, in the lock, which providers it leaves out and that make generate wrote it.
func header(r result) string {
	h := "# Written by make generate (hack/providerlocks) from the toolchain's provider pins:\n" +
		"# every workspace of this module installs these versions. Do not edit.\n"
	for _, u := range r.unlocked {
		h += "# Not locked: " + u + ": no pinned version in the toolchain's mirror; a workspace\n" +
			"# chooses it at its first init, and keeps that version from then on.\n"
	}
	return h
}

// reportText is docs/provider-locks.md.
func reportText(results []result, pins map[string]string, platforms []string) string {
	var b strings.Builder
	b.WriteString("# Provider locks of the bundled modules\n\n")
	b.WriteString("<!-- Written by make generate (hack/providerlocks); do not edit. -->\n\n")
	b.WriteString("Every bundled module pins its providers' major version in `versions.tf`, and its\n")
	b.WriteString("committed `.terraform.lock.hcl` fixes the exact version that every workspace of the module\n")
	b.WriteString("installs (see [Provider locks and revisions](changes.md#provider-locks-and-revisions)).\n")
	b.WriteString("They fix versions, not checksums, so that they hold on every platform and with every\n")
	b.WriteString("provider source: terraform records the checksums of what it installs at a workspace's\n")
	b.WriteString("first init, and the resource keeps them. The versions were checked against the\n")
	fmt.Fprintf(&b, "%s packages of the toolchain's provider mirror.\n\n", strings.Join(platforms, ", "))
	b.WriteString("The `google` and `azurerm` versions are the ones the GCP and Azure modules are tested\n")
	b.WriteString("against. Those providers cannot be run where Terraplane is tested, so their modules are\n")
	b.WriteString("checked against the providers' published schemas of exactly these versions, served by a\n")
	b.WriteString("stand-in provider in the tests' own mirror (see [Google Cloud](kinds/gcp.md#how-it-is-tested)\n")
	b.WriteString("and [Azure](kinds/azure.md#how-it-is-tested)). Their locks hold no checksum either: none of\n")
	b.WriteString("the real release could be computed here, and one of the stand-in would be wrong for it.\n")
	b.WriteString("The first init of a workspace downloads the real provider (from the registry or your\n")
	b.WriteString("mirror) at the locked version and records its checksums; a test workspace records the\n")
	b.WriteString("stand-in's.\n\n")
	names := make([]string, 0, len(pins))
	for n := range pins {
		names = append(names, n)
	}
	slices.Sort(names)
	b.WriteString("Pinned provider versions: ")
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "`%s` %s", n, pins[n])
	}
	b.WriteString(".\n\n| module | locked | not locked |\n|---|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| `tfmodules/%s` | %s | %s |\n", r.dir, list(r.locked), list(r.unlocked))
	}
	b.WriteString("\nA provider that is not locked has no pinned version. A workspace of such a module\n")
	b.WriteString("chooses the newest version its constraint allows at its first init, records it in the\n")
	b.WriteString("resource's `status.terraform.providerLock`, and keeps it from then on: a newer version\n")
	b.WriteString("reaches it only with a Terraplane release whose module locks it, a new class revision\n")
	b.WriteString("that moves it, or a plan that waits for approval (reason `ProviderUpgrade`).\n")
	return b.String()
}

// list writes items for a table cell.
func list(items []string) string {
	if len(items) == 0 {
		return "—"
	}
	return strings.Join(items, ", ")
}
