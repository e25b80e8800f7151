package install

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"golang.org/x/sys/unix"
)

// unpack writes img's flattened root file system into dir.
func unpack(img v1.Image, dir string) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.Clean("/"+hdr.Name))
		mode := os.FileMode(hdr.Mode).Perm()
		if hdr.Mode&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			if err := os.Chmod(target, mode); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, tr); err != nil {
				_ = f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unexpected entry %s (type %c) in the image", hdr.Name, hdr.Typeflag)
		}
		if err := os.Lchown(target, hdr.Uid, hdr.Gid); err != nil {
			return err
		}
	}
}

// addDevices makes the device nodes a container runtime gives every container.
func addDevices(root string) error {
	if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
		return err
	}
	for name, minor := range map[string]uint32{"null": 3, "zero": 5, "random": 8, "urandom": 9} {
		p := filepath.Join(root, "dev", name)
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, minor))); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("mknod %s: %w", p, err)
		}
		if err := os.Chmod(p, 0o666); err != nil {
			return err
		}
	}
	return nil
}

// chrootCommand runs path inside root as the image's user, with the image's
// environment and nothing of the test's.
func chrootCommand(t *testing.T, img v1.Image, root string, args ...string) *exec.Cmd {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	var uid, gid uint32
	if _, err := fmt.Sscanf(cfg.Config.User, "%d:%d", &uid, &gid); err != nil {
		t.Fatalf("image user %q is not numeric uid:gid: %v", cfg.Config.User, err)
	}
	// exec resolves the program on the host; the chroot makes the kernel run the image's.
	cmd := exec.Command(filepath.Join(root, cfg.Config.Entrypoint[0]), args...)
	cmd.Path = cfg.Config.Entrypoint[0]
	cmd.Args = append([]string{cfg.Config.Entrypoint[0]}, args...)
	cmd.Env = cfg.Config.Env
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	if strings.TrimSpace(cfg.Config.WorkingDir) != "" {
		cmd.Dir = cfg.Config.WorkingDir
	}
	return cmd
}
