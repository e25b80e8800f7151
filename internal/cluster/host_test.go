package cluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMountsUnder picks the mounts under the cluster's directory, and only those, latest
// first, with mountinfo's escapes undone.
func TestMountsUnder(t *testing.T) {
	const mountinfo = `22 27 0:21 / /proc rw,relatime - proc proc rw
30 27 0:40 / /work/c/kubelet rw - ext4 /dev/vda rw
31 30 0:41 / /work/c/kubelet/pods/a/volumes/kubernetes.io~projected/token rw - tmpfs tmpfs rw
32 27 0:42 / /work/c/containerd/state/io.containerd.grpc.v1.cri/sandboxes/x/shm rw - tmpfs shm rw
33 27 0:43 / /work/c-other/kubelet rw - tmpfs tmpfs rw
34 27 0:44 / /work/c/with\040space rw - tmpfs tmpfs rw
35 27 0:45 / /work/c rw - tmpfs tmpfs rw
`
	want := []string{
		"/work/c",
		"/work/c/with space",
		"/work/c/containerd/state/io.containerd.grpc.v1.cri/sandboxes/x/shm",
		"/work/c/kubelet/pods/a/volumes/kubernetes.io~projected/token",
		"/work/c/kubelet",
	}
	if d := cmp.Diff(want, mountsUnder(mountinfo, "/work/c")); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if got := mountsUnder(mountinfo, "/nowhere"); len(got) != 0 {
		t.Errorf("mounts under /nowhere: %v", got)
	}
}

// TestUnescapeMount undoes octal escapes and leaves other backslashes alone.
func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		`/a\040b`: "/a b", `/tab\011x`: "/tab\tx", `/back\134slash`: `/back\slash`, `/plain`: "/plain", `/odd\9`: `/odd\9`,
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}
