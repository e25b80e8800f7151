package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
)

// Runner uids: when the controller runs as root, each pool's runner runs under a uid of
// its own. A uid is allocated, never derived from the pool's name (a tenant chooses
// that name, and so could choose another pool's uid), and recorded in a table.
//
// The table is a JSON file in the controller's work directory, not a ConfigMap or
// Secret: uids belong to one host (its /etc/passwd, the files its runners own), so
// the record lives on that host, beside what it describes, and lasts as long as the
// controller's work directory does; that directory is the controller's alone (0700),
// so no runner may edit it. It is written whole to a temporary file, synced and
// renamed over the old one, so that a crash leaves the old table or the new one,
// never half of either; a lock file makes two controllers on one work directory
// take turns. An entry is never removed: a uid once given to a pool may own files
// (its directory, what its modules wrote), so it never goes to another pool.

// Default uid range of runners: UIDBase up to UIDBase+DefaultUIDCount.
const (
	DefaultUIDBase  = 20000
	DefaultUIDCount = 10000
)

// UIDConflictError is a pool whose uid owns another pool's directory: its runner would
// reach that pool's token, kubeconfig and workspaces, so it is not started.
type UIDConflictError struct {
	// Pool is the pool refused; UID its uid.
	Pool PoolRef
	UID  int
	// Dir is the other pool's directory that uid owns.
	Dir string
}

// Error says which uid owns which directory.
func (e *UIDConflictError) Error() string {
	return fmt.Sprintf("runner pool %s: its uid %d owns %s, another pool's directory; the runner is not started (remove that directory, or the pool's entry from the runner uid table, once no runner uses it)",
		e.Pool, e.UID, e.Dir)
}

// HostUIDError is a pool whose recorded uid a host user or group has since taken.
type HostUIDError struct {
	// Pool is the pool refused; UID its uid; Owner the host user or group that has it.
	Pool  PoolRef
	UID   int
	Owner string
}

// Error names the host user and what to do.
func (e *HostUIDError) Error() string {
	return fmt.Sprintf("runner pool %s: its uid %d now belongs to the host's %s; the runner is not started (give that account another id, or remove the pool's entry from the runner uid table)",
		e.Pool, e.UID, e.Owner)
}

// uidTable allocates uids to pools and records them in a file.
type uidTable struct {
	// path is the table's file.
	path string
	// base and count are the uid range, [base, base+count).
	base, count int
	// poolsDir holds the pools' directories (<namespace>_<pool>), whose owners are
	// checked.
	poolsDir string
	// otherPools, a glob, finds the pools directories of other controllers on this host
	// (their tables are their own), whose owners are checked too.
	otherPools string
	// hostOwner names the host user or group that has uid, "" when none has; nil means
	// the host's account database (os/user).
	hostOwner func(uid int) (string, error)

	mu sync.Mutex
}

// uidFile is the table's file.
type uidFile struct {
	// Pools maps "<namespace>/<pool>" to its uid.
	Pools map[string]int `json:"pools"`
}

// assign returns pool's uid: the one recorded, or the lowest free uid of the range,
// recorded before it is returned. A uid is free when no pool has it, no host user or
// group has it, and it owns no pool directory. A pool whose uid owns another pool's
// directory, or has been taken by a host account, is refused.
func (t *uidTable) assign(pool PoolRef) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	unlock, err := lockFile(t.path + ".lock")
	if err != nil {
		return -1, err
	}
	defer unlock()
	table, err := t.load()
	if err != nil {
		return -1, err
	}
	owners, err := t.dirOwners()
	if err != nil {
		return -1, err
	}
	if uid, ok := table.Pools[pool.String()]; ok {
		return uid, t.check(pool, uid, owners)
	}
	uid, err := t.free(table, owners)
	if err != nil {
		return -1, err
	}
	table.Pools[pool.String()] = uid
	if err := t.save(table); err != nil {
		return -1, err
	}
	return uid, nil
}

// check refuses uid for pool when it owns another pool's directory, or a host account
// has it.
func (t *uidTable) check(pool PoolRef, uid int, owners map[int][]string) error {
	for _, dir := range owners[uid] {
		if filepath.Base(dir) != poolDirName(pool) {
			return &UIDConflictError{Pool: pool, UID: uid, Dir: dir}
		}
	}
	owner, err := t.owner(uid)
	if err != nil {
		return err
	}
	if owner != "" {
		return &HostUIDError{Pool: pool, UID: uid, Owner: owner}
	}
	return nil
}

// free is the lowest uid of the range that no pool, pool directory or host account has.
func (t *uidTable) free(table uidFile, owners map[int][]string) (int, error) {
	taken := map[int]bool{}
	for _, uid := range table.Pools {
		taken[uid] = true
	}
	for uid := t.base; uid < t.base+t.count; uid++ {
		if taken[uid] || len(owners[uid]) > 0 {
			continue
		}
		owner, err := t.owner(uid)
		if err != nil {
			return -1, err
		}
		if owner == "" {
			return uid, nil
		}
	}
	return -1, fmt.Errorf("no free runner uid left in %d-%d (%d pools recorded in %s)", t.base, t.base+t.count-1, len(table.Pools), t.path)
}

// owner is the host user or group that has uid, "" when none has.
func (t *uidTable) owner(uid int) (string, error) {
	if t.hostOwner != nil {
		return t.hostOwner(uid)
	}
	return hostOwner(uid)
}

// hostOwner looks uid up as a user id and as a group id (runners run with gid = uid).
func hostOwner(uid int) (string, error) {
	id := strconv.Itoa(uid)
	u, err := user.LookupId(id)
	if err == nil {
		return "user " + u.Username, nil
	}
	if !errors.As(err, new(user.UnknownUserIdError)) {
		return "", fmt.Errorf("look up host user %d: %w", uid, err)
	}
	g, err := user.LookupGroupId(id)
	if err == nil {
		return "group " + g.Name, nil
	}
	if !errors.As(err, new(user.UnknownGroupIdError)) {
		return "", fmt.Errorf("look up host group %d: %w", uid, err)
	}
	return "", nil
}

// load reads the table; a table never written is empty.
func (t *uidTable) load() (uidFile, error) {
	table := uidFile{Pools: map[string]int{}}
	raw, err := os.ReadFile(t.path)
	if errors.Is(err, os.ErrNotExist) {
		return table, nil
	}
	if err != nil {
		return table, fmt.Errorf("read runner uid table: %w", err)
	}
	if err := json.Unmarshal(raw, &table); err != nil {
		return table, fmt.Errorf("read runner uid table %s: %w (it is never rewritten from nothing: fix or remove it by hand)", t.path, err)
	}
	if table.Pools == nil {
		table.Pools = map[string]int{}
	}
	return table, nil
}

// save writes the table whole: a temporary file beside it, synced, renamed over it,
// and the directory synced.
func (t *uidTable) save(table uidFile) error {
	raw, err := json.MarshalIndent(table, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(t.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write runner uid table: %w", err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(t.path)+".tmp-")
	if err != nil {
		return fmt.Errorf("write runner uid table: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write runner uid table: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write runner uid table: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write runner uid table: %w", err)
	}
	if err := os.Rename(tmp.Name(), t.path); err != nil {
		return fmt.Errorf("write runner uid table: %w", err)
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// lockFile takes an exclusive lock on path (made if missing) and returns its release.
func lockFile(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("lock runner uid table: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock runner uid table: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock runner uid table: %w", err)
	}
	return func() { _ = f.Close() }, nil // closing releases the lock
}

// dirOwners maps each uid that owns a pool directory, of this controller or of another
// on this host, to those directories.
func (t *uidTable) dirOwners() (map[int][]string, error) {
	dirs := []string{t.poolsDir}
	if t.otherPools != "" {
		others, _ := filepath.Glob(t.otherPools)
		for _, d := range others {
			if d != t.poolsDir {
				dirs = append(dirs, d)
			}
		}
	}
	owners := map[int][]string{}
	for _, d := range dirs {
		if err := addOwners(owners, d); err != nil {
			return nil, err
		}
	}
	for _, dirs := range owners {
		sort.Strings(dirs)
	}
	return owners, nil
}

// addOwners adds the owners of the directories in poolsDir to owners.
func addOwners(owners map[int][]string, poolsDir string) error {
	entries, err := os.ReadDir(poolsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("runner pool directories: %w", err)
	}
	for _, e := range entries {
		path := filepath.Join(poolsDir, e.Name())
		if uid, ok := ownerOf(path); ok {
			owners[uid] = append(owners[uid], path)
		}
	}
	return nil
}

// poolDirName is pool's directory under the pools directory.
func poolDirName(pool PoolRef) string { return pool.Namespace + "_" + pool.Name }
