package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ProcessDir is where the runners of a controller whose work directory is workDir keep
// their directories: outside it (only the controller may enter it), in the temporary
// directory, under a name of its own for each work directory, the same from one start
// to the next, so that what a runner left when the controller stopped short is found
// again.
func ProcessDir(workDir string) string {
	sum := sha256.Sum256([]byte(workDir))
	return filepath.Join(os.TempDir(), processDirPrefix+hex.EncodeToString(sum[:6]))
}

// processDirPrefix begins the name of every controller's runner directory.
const processDirPrefix = "terraplane-runners-"

// poolDir makes pool's directory, usable by uid alone (and root): its work directory,
// home and temporary files, kubeconfig and socket. The directories above it may be
// passed through, not listed. A directory the pool had under another uid is removed
// first (its workspaces are disposable: state lives in the cluster). What the runner
// left inside is never followed: a symlink where a directory belongs is replaced.
func (p *Processes) poolDir(pool PoolRef, uid int) (string, error) {
	for _, d := range []string{p.Dir, filepath.Join(p.Dir, "pools")} {
		if err := ownDir(d, 0o711); err != nil {
			return "", err
		}
	}
	dir := filepath.Join(p.Dir, "pools", poolDirName(pool))
	if owner, ok := ownerOf(dir); ok && uid >= 0 && owner != uid {
		p.Log.Info("removing a runner directory left by another uid", "pool", pool.String(), "uid", owner, "now", uid)
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("runner directory: %w", err)
		}
	}
	for _, sub := range []string{"", "work", "home", "tmp"} {
		if err := runnerSubdir(filepath.Join(dir, sub), uid); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// ownDir makes d (mode perm) and checks that it is a directory of this process's uid,
// not a link: its path may be predictable, and so made first by someone else.
func ownDir(d string, perm os.FileMode) error {
	if err := os.MkdirAll(d, perm); err != nil {
		return fmt.Errorf("runner directory: %w", err)
	}
	info, err := os.Lstat(d)
	if err != nil {
		return fmt.Errorf("runner directory: %w", err)
	}
	if owner, _ := ownerOf(d); !info.IsDir() || owner != geteuid() {
		return fmt.Errorf("runner directory %s is not a directory of uid %d: remove it", d, geteuid())
	}
	if err := os.Chmod(d, perm); err != nil {
		return fmt.Errorf("runner directory: %w", err)
	}
	return nil
}

// runnerSubdir makes d, a directory of the pool's, for uid. Anything else at d (a
// link the runner made, a file) is removed first, and it is given to uid without
// following links.
func runnerSubdir(d string, uid int) error {
	if info, err := os.Lstat(d); err == nil && !info.IsDir() {
		if err := os.Remove(d); err != nil {
			return fmt.Errorf("runner directory: %w", err)
		}
	}
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("runner directory: %w", err)
	}
	return chown(d, uid)
}

// ownerOf is the uid that owns path (not following a link), and whether it exists.
func ownerOf(path string) (int, bool) {
	info, err := os.Lstat(path)
	if err != nil {
		return -1, false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, false
	}
	return int(st.Uid), true
}

// writeKubeconfig writes the runner's kubeconfig: the API server, its CA, and a token
// file with the pool's token.
func (p *Processes) writeKubeconfig(dir, token string, uid int) (string, error) {
	tokenFile := filepath.Join(dir, "token")
	if err := writeOwned(tokenFile, []byte(token), uid); err != nil {
		return "", err
	}
	cluster := &clientcmdapi.Cluster{Server: p.Config.Host, CertificateAuthorityData: p.Config.CAData,
		InsecureSkipTLSVerify: p.Config.Insecure, TLSServerName: p.Config.ServerName}
	if len(cluster.CertificateAuthorityData) == 0 && p.Config.CAFile != "" {
		ca, err := os.ReadFile(p.Config.CAFile)
		if err != nil {
			return "", fmt.Errorf("API server CA: %w", err)
		}
		cluster.CertificateAuthorityData = ca
	}
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"cluster": cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"runner": {TokenFile: tokenFile}},
		Contexts:       map[string]*clientcmdapi.Context{"runner": {Cluster: "cluster", AuthInfo: "runner"}},
		CurrentContext: "runner",
	}
	raw, err := clientcmd.Write(cfg)
	if err != nil {
		return "", fmt.Errorf("runner kubeconfig: %w", err)
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, writeOwned(path, raw, uid)
}

// prepareShared puts what runners under another uid run and read where they may: the
// binary and the provider mirror, linked (or copied) out of directories they cannot enter.
func (p *Processes) prepareShared(otherUID bool) error {
	p.shared.Do(func() {
		p.bin, p.tf, p.mirror = p.Binary, p.Terraform, p.PluginMirror
		if !otherUID {
			return
		}
		if p.sharedE = ownDir(p.Dir, 0o711); p.sharedE != nil {
			return
		}
		p.bin, p.tf = filepath.Join(p.Dir, "bin", "terraplane"), filepath.Join(p.Dir, "bin", filepath.Base(p.Terraform))
		if p.sharedE = linkTree(p.Binary, p.bin); p.sharedE != nil {
			return
		}
		if p.sharedE = linkTree(p.Terraform, p.tf); p.sharedE != nil {
			return
		}
		if p.PluginMirror != "" {
			p.mirror = filepath.Join(p.Dir, "mirror")
			p.sharedE = linkTree(p.PluginMirror, p.mirror)
		}
	})
	return p.sharedE
}
