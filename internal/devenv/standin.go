package devenv

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// StandinMirror is the tests' own provider mirror: test/standin-provider as
// hashicorp/google and hashicorp/azurerm (make tools-test, target cloud-schemas). It is
// never part of PluginMirror, from which images take their providers.
func StandinMirror() string { return filepath.Join(CacheDir(), "standin-providers") }

// StandinProviders are the providers StandinMirror holds, with their versions.
var StandinProviders = map[string]string{"hashicorp/google": "6.50.0", "hashicorp/azurerm": "4.55.0"}

// TestMirror makes dir a filesystem mirror of PluginMirror and StandinMirror together:
// real directories (terraform does not follow a symlinked one) with the providers'
// files linked. It fails naming the make target when a stand-in is missing.
func TestMirror(dir string) error {
	for source, version := range StandinProviders {
		p := filepath.Join(StandinMirror(), "registry.terraform.io", source, version, "linux_amd64", "schema.json")
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("the stand-in for %s %s is not in %s: run `make tools-test` (or hack/install-tools.sh cloud-schemas)", source, version, StandinMirror())
		}
	}
	for _, src := range []string{PluginMirror(), StandinMirror()} {
		if err := linkMirror(src, dir); err != nil {
			return fmt.Errorf("link %s into %s: %w", src, dir, err)
		}
	}
	return nil
}

// linkMirror links every file of the mirror src (host/ns/type/version/os_arch/file)
// into the same place under dst.
func linkMirror(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && path == src {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if strings.HasPrefix(d.Name(), ".") && d.Name() != "." {
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if strings.Count(filepath.ToSlash(rel), "/") != 5 { // host/ns/type/version/os_arch/file
			return nil
		}
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return err
		}
		return os.Symlink(target, filepath.Join(dst, rel))
	})
}

// TestMirrorWithLog is TestMirror with every stand-in logging its calls to logPath: each
// stand-in executable in dir is a small script that sets TERRAPLANE_STANDIN_LOG and runs
// the stand-in. A controller gives terraform (and the providers it keeps warm) only a
// minimal environment, so the variable cannot come from the test's own.
func TestMirrorWithLog(dir, logPath string) error {
	if err := TestMirror(dir); err != nil {
		return err
	}
	for source, version := range StandinProviders {
		_, typ, _ := strings.Cut(source, "/")
		exes, err := filepath.Glob(filepath.Join(dir, "*", source, version, "*", "terraform-provider-"+typ+"_*"))
		if err != nil {
			return err
		}
		for _, exe := range exes {
			if err := logWrapper(exe, logPath); err != nil {
				return fmt.Errorf("stand-in %s: %w", source, err)
			}
		}
	}
	return nil
}

// logWrapper replaces the link exe with a script that runs its target with
// TERRAPLANE_STANDIN_LOG set to logPath.
func logWrapper(exe, logPath string) error {
	target, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return err
	}
	if err := os.Remove(exe); err != nil {
		return err
	}
	script := fmt.Sprintf("#!/bin/sh\nTERRAPLANE_STANDIN_LOG=%q exec %q \"$@\"\n", logPath, target)
	return os.WriteFile(exe, []byte(script), 0o755)
}
