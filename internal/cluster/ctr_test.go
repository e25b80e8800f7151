package cluster

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeCtr puts a ctr on PATH that records its arguments, one call a line, prints what
// the environment says for a listing, and fails with $CTR_FAIL on stderr when it is set;
// it returns the record's path.
func fakeCtr(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script := `#!/bin/sh
echo "$*" >> "$CTR_LOG"
if [ -n "$CTR_FAIL" ]; then echo "$CTR_FAIL" >&2; exit 1; fi
case "$5 $6" in
"tasks ls") printf '%s' "$CTR_TASKS" ;;
"containers ls") printf '%s' "$CTR_CONTAINERS" ;;
"images ls") printf '%s' "$CTR_IMAGES" ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "ctr"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	log := filepath.Join(dir, "calls")
	t.Setenv("CTR_LOG", log)
	for _, k := range []string{"CTR_FAIL", "CTR_TASKS", "CTR_CONTAINERS", "CTR_IMAGES"} {
		t.Setenv(k, "")
	}
	return log
}

// calls are the argument lists ctr was run with, without the address and namespace,
// which it checks every call names.
func calls(t *testing.T, log string, o Options) []string {
	t.Helper()
	raw, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	prefix := "--address " + o.socket() + " --namespace k8s.io "
	for _, l := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
		rest, ok := strings.CutPrefix(l, prefix)
		if !ok {
			t.Errorf("ctr %s: not the cluster's containerd in the CRI's namespace", l)
		}
		out = append(out, rest)
	}
	return out
}

// TestImages: the image calls ask containerd what they promise: an exact reference, a
// reference with a label, an import keeping digests, a label; a failing ctr's error
// names the command and quotes its stderr.
func TestImages(t *testing.T) {
	log := fakeCtr(t)
	cl := &Cluster{Options: Options{Dir: t.TempDir()}}
	ctx := context.Background()

	t.Setenv("CTR_IMAGES", "terraplane.local/pause:10\ndocker.io/library/terraplane:dev\n")
	if has, err := cl.HasImage(ctx, PauseImage); has || err != nil {
		t.Errorf("HasImage of a reference that only prefixes one held = %v, %v; want false", has, err)
	}
	if has, err := cl.HasImage(ctx, "docker.io/library/terraplane:dev"); !has || err != nil {
		t.Errorf("HasImage of a held reference = %v, %v; want true", has, err)
	}
	t.Setenv("CTR_IMAGES", "docker.io/library/terraplane:dev\n")
	if has, err := cl.HasLabeledImage(ctx, "docker.io/library/terraplane:dev", "terraplane.io/source", "abc"); !has || err != nil {
		t.Errorf("HasLabeledImage of a listed image = %v, %v; want true", has, err)
	}
	t.Setenv("CTR_IMAGES", "")
	if has, err := cl.HasLabeledImage(ctx, "docker.io/library/terraplane:dev", "terraplane.io/source", "abc"); has || err != nil {
		t.Errorf("HasLabeledImage of no image = %v, %v; want false", has, err)
	}
	if err := cl.ImportImage(ctx, "/images/x.tar"); err != nil {
		t.Error(err)
	}
	if err := cl.LabelImage(ctx, "docker.io/library/terraplane:dev", "terraplane.io/source", "abc"); err != nil {
		t.Error(err)
	}
	want := []string{
		"images ls -q",
		"images ls -q",
		`images ls -q name==docker.io/library/terraplane:dev,labels."terraplane.io/source"==abc`,
		`images ls -q name==docker.io/library/terraplane:dev,labels."terraplane.io/source"==abc`,
		"images import --digests /images/x.tar",
		"images label docker.io/library/terraplane:dev terraplane.io/source=abc",
	}
	if d := cmp.Diff(want, calls(t, log, cl.Options)); d != "" {
		t.Errorf("ctr calls (-want +got):\n%s", d)
	}

	t.Setenv("CTR_FAIL", "connection refused")
	has, err := cl.HasImage(ctx, PauseImage)
	if has || err == nil || !strings.Contains(err.Error(), "ctr images ls -q") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("HasImage with ctr failing = %v, %v; want an error naming the command and its stderr", has, err)
	}
	if _, err := cl.HasLabeledImage(ctx, "r", "k", "v"); err == nil {
		t.Error("HasLabeledImage with ctr failing: no error")
	}
}

// TestRemoveContainers: with containerd running, every task is killed before any is
// removed, then every container is removed; with containerd down ctr is not run; a
// failed listing is logged and nothing is removed.
func TestRemoveContainers(t *testing.T) {
	log := fakeCtr(t)
	cl := &Cluster{Options: Options{Dir: t.TempDir()}}
	var out bytes.Buffer

	cl.removeContainers(&out)
	if got := calls(t, log, cl.Options); got != nil || out.Len() != 0 {
		t.Fatalf("containerd down: ctr run %v, log %q; want nothing", got, out.String())
	}

	containerd := component{name: "containerd", binary: fakeBinary(t, "containerd"), args: []string{"60"}}
	startFakeDaemon(t, cl.Options, containerd)

	t.Setenv("CTR_TASKS", "t1\nt2\n")
	t.Setenv("CTR_CONTAINERS", "t1\nt2\nc3\n")
	cl.removeContainers(&out)
	want := []string{
		"tasks ls -q",
		"tasks kill -s SIGKILL t1", "tasks kill -s SIGKILL t2",
		"tasks rm -f t1", "tasks rm -f t2",
		"containers ls -q",
		"containers rm t1", "containers rm t2", "containers rm c3",
	}
	if d := cmp.Diff(want, calls(t, log, cl.Options)); d != "" {
		t.Errorf("ctr calls (-want +got):\n%s", d)
	}
	if out.String() != "cluster: removed 3 containers\n" {
		t.Errorf("log %q", out.String())
	}

	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	t.Setenv("CTR_FAIL", "no socket")
	cl.removeContainers(&out)
	if d := cmp.Diff([]string{"tasks ls -q"}, calls(t, log, cl.Options)); d != "" || !strings.Contains(out.String(), "list containers") {
		t.Errorf("a failed listing: calls (-want +got):\n%s; log %q", d, out.String())
	}
}
