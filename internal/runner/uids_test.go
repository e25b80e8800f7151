package runner

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hashedUID is how runner uids were derived before they were allocated: from the pool's
// name, which a tenant chooses.
func hashedUID(pool PoolRef) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(pool.String()))
	return DefaultUIDBase + int(h.Sum32()%DefaultUIDCount)
}

// collidingPool is a pool of namespace ns whose hashed uid is victim's.
func collidingPool(t *testing.T, ns string, victim PoolRef) PoolRef {
	t.Helper()
	for i := range 1_000_000 {
		p := PoolRef{ns, fmt.Sprintf("p%d", i)}
		if hashedUID(p) == hashedUID(victim) {
			return p
		}
	}
	t.Fatal("no colliding pool name")
	return PoolRef{}
}

// noHostUsers is a host with no account in the runners' range.
func noHostUsers(int) (string, error) { return "", nil }

func newTable(dir string, base int, host func(int) (string, error)) *uidTable {
	return &uidTable{path: filepath.Join(dir, "work", "runner-uids.json"), base: base, count: DefaultUIDCount,
		poolsDir: filepath.Join(dir, "runners", "pools"), hostOwner: host}
}

// TestUIDsAreAllocated: pools whose names hashed onto one uid get distinct uids; every
// pool keeps its uid, also in a table read again after a restart; a new pool after the
// restart gets a uid no pool has.
func TestUIDsAreAllocated(t *testing.T) {
	dir := t.TempDir()
	victim := PoolRef{"tenant-b", "default"}
	chosen := collidingPool(t, "tenant-a", victim)
	pools := []PoolRef{victim, chosen, {"terraplane-system", "default"}}
	table := newTable(dir, DefaultUIDBase, noHostUsers)
	got := map[PoolRef]int{}
	for _, p := range pools {
		uid, err := table.assign(p)
		if err != nil {
			t.Fatal(err)
		}
		got[p] = uid
	}
	want := map[PoolRef]int{victim: 20000, chosen: 20001, {"terraplane-system", "default"}: 20002}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("uids (-want +got):\n%s", d)
	}
	restarted := newTable(dir, DefaultUIDBase, noHostUsers)
	for _, p := range pools {
		if uid, err := restarted.assign(p); err != nil || uid != want[p] {
			t.Errorf("after a restart pool %s has uid %d (%v), want %d", p, uid, err, want[p])
		}
	}
	if uid, err := restarted.assign(PoolRef{"tenant-c", "default"}); err != nil || uid != 20003 {
		t.Errorf("a new pool after a restart: uid %d, %v; want 20003", uid, err)
	}
	if info, err := os.Stat(table.path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the table file: %v, %v; want mode 0600", info, err)
	}
}

// TestUIDsNeverCollide: many pools, two controllers on one table at once: no uid twice.
func TestUIDsNeverCollide(t *testing.T) {
	dir := t.TempDir()
	a, b := newTable(dir, DefaultUIDBase, noHostUsers), newTable(dir, DefaultUIDBase, noHostUsers)
	var mu sync.Mutex
	owner := map[int]PoolRef{}
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			table := a
			if i%2 == 1 {
				table = b
			}
			pool := PoolRef{fmt.Sprintf("ns-%d", i%7), fmt.Sprintf("pool-%d", i)}
			uid, err := table.assign(pool)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if other, taken := owner[uid]; taken {
				t.Errorf("uid %d given to %s and %s", uid, other, pool)
			}
			owner[uid] = pool
		})
	}
	wg.Wait()
	if len(owner) != 200 {
		t.Errorf("%d uids for 200 pools", len(owner))
	}
}

// TestUIDsAndDirectories: a uid that owns a pool directory is not given to a new pool,
// and a pool whose recorded uid owns another pool's directory is refused. The
// directories are this process's (so that the test needs no root): the range starts at
// its uid.
func TestUIDsAndDirectories(t *testing.T) {
	dir := t.TempDir()
	euid := os.Geteuid()
	table := newTable(dir, euid, noHostUsers)
	left := PoolRef{"tenant-b", "old"}
	if err := os.MkdirAll(filepath.Join(table.poolsDir, poolDirName(left)), 0o700); err != nil {
		t.Fatal(err)
	}
	newcomer := PoolRef{"tenant-a", "default"}
	if uid, err := table.assign(newcomer); err != nil || uid != euid+1 {
		t.Fatalf("uid %d, %v; want %d: %d owns %s's directory", uid, err, euid+1, euid, left)
	}
	// the table says another pool has the directory owner's uid (a table edited, or
	// restored from elsewhere)
	if err := os.WriteFile(table.path, fmt.Appendf(nil, `{"pools":{"tenant-a/default":%d,"tenant-a/sneaky":%d}}`, euid+1, euid), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := table.assign(PoolRef{"tenant-a", "sneaky"})
	var conflict *UIDConflictError
	if !errors.As(err, &conflict) || conflict.Dir != filepath.Join(table.poolsDir, "tenant-b_old") {
		t.Errorf("a pool whose uid owns another pool's directory: %v; want it refused", err)
	}
	// the pool whose directory it is, recorded nowhere, gets a uid no one has
	if uid, err := table.assign(left); err != nil || uid != euid+2 {
		t.Errorf("the directory's own pool: uid %d, %v; want %d", uid, err, euid+2)
	}
}

// TestUIDsSkipHostUsers: a uid a host user or group has is never given; a recorded uid a
// host account has taken since is refused.
func TestUIDsSkipHostUsers(t *testing.T) {
	dir := t.TempDir()
	accounts := map[int]string{20000: "user postgres", 20001: "group docker"}
	host := func(uid int) (string, error) { return accounts[uid], nil }
	table := newTable(dir, DefaultUIDBase, host)
	uid, err := table.assign(PoolRef{"tenant-a", "default"})
	if err != nil || uid != 20002 {
		t.Fatalf("uid %d, %v; want 20002, the first no host account has", uid, err)
	}
	accounts[20002] = "user alice"
	_, err = table.assign(PoolRef{"tenant-a", "default"})
	var taken *HostUIDError
	if !errors.As(err, &taken) || taken.Owner != "user alice" {
		t.Errorf("a recorded uid a host user took since: %v; want it refused", err)
	}
	// the host's own database
	if owner, err := hostOwner(0); err != nil || owner != "user root" {
		t.Errorf("uid 0 on this host: %q, %v; want user root", owner, err)
	}
}

// TestUIDTableIsNeverReset: a table that cannot be read refuses every pool rather than
// starting again from nothing (which would give recorded uids to new pools); a full
// range is refused too.
func TestUIDTableIsNeverReset(t *testing.T) {
	dir := t.TempDir()
	table := newTable(dir, DefaultUIDBase, noHostUsers)
	if err := os.MkdirAll(filepath.Dir(table.path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(table.path, []byte(`{"pools":{"tenant-a/default":20`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := table.assign(PoolRef{"tenant-b", "default"}); err == nil {
		t.Error("a broken table was used")
	}
	if raw, _ := os.ReadFile(table.path); string(raw) != `{"pools":{"tenant-a/default":20` {
		t.Errorf("a broken table was rewritten: %s", raw)
	}
	small := &uidTable{path: filepath.Join(dir, "small.json"), base: 30000, count: 1, hostOwner: noHostUsers}
	if _, err := small.assign(PoolRef{"a", "default"}); err != nil {
		t.Fatal(err)
	}
	if _, err := small.assign(PoolRef{"b", "default"}); err == nil {
		t.Error("a pool past the end of the range got a uid")
	}
}

// TestUIDsOfOtherControllers: another controller on the host keeps a table of its own;
// a uid that owns one of its pool directories is skipped all the same, and a pool whose
// uid owns one is refused.
func TestUIDsOfOtherControllers(t *testing.T) {
	dir := t.TempDir()
	euid := os.Geteuid()
	table := &uidTable{path: filepath.Join(dir, "work", "runner-uids.json"), base: euid, count: 10, hostOwner: noHostUsers,
		poolsDir: filepath.Join(dir, processDirPrefix+"mine", "pools"), otherPools: filepath.Join(dir, processDirPrefix+"*", "pools")}
	theirs := filepath.Join(dir, processDirPrefix+"theirs", "pools", "tenant-x_default")
	if err := os.MkdirAll(theirs, 0o700); err != nil {
		t.Fatal(err)
	}
	if uid, err := table.assign(PoolRef{"tenant-a", "default"}); err != nil || uid != euid+1 {
		t.Fatalf("uid %d, %v; want %d: %d owns another controller's pool directory", uid, err, euid+1, euid)
	}
	if err := os.WriteFile(table.path, fmt.Appendf(nil, `{"pools":{"tenant-a/old":%d}}`, euid), 0o600); err != nil {
		t.Fatal(err)
	}
	var conflict *UIDConflictError
	if _, err := table.assign(PoolRef{"tenant-a", "old"}); !errors.As(err, &conflict) || conflict.Dir != theirs {
		t.Errorf("a pool whose uid owns another controller's pool directory: %v; want it refused", err)
	}
}
