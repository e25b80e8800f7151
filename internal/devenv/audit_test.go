package devenv

import (
	"path/filepath"
	"strconv"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TestAuditLogIsNeverRotated: the API server logs writes to one file that it never
// rotates at its default 100 MB, since readers count from an offset in it.
func TestAuditLogIsNeverRotated(t *testing.T) {
	env := &envtest.Environment{}
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := auditWrites(env, path); err != nil {
		t.Fatal(err)
	}
	args := env.ControlPlane.GetAPIServer().Configure()
	if got := args.Get("audit-log-path").Get(nil); len(got) != 1 || got[0] != path {
		t.Errorf("audit-log-path = %v, want %s", got, path)
	}
	got := args.Get("audit-log-maxsize").Get(nil)
	if len(got) != 1 {
		t.Fatalf("audit-log-maxsize = %v, want one value", got)
	}
	if mb, err := strconv.Atoi(got[0]); err != nil || mb < 100_000 {
		t.Errorf("audit-log-maxsize = %s MB, want at least 100,000 (100 GB)", got[0])
	}
}
