package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// Cluster is a started cluster.
type Cluster struct {
	Options
	// Took is how long Start took, by phase.
	Took []Phase
}

// Phase is one timed step of Start.
type Phase struct {
	Name string
	Took time.Duration
}

// Start starts the cluster and waits until its node is Ready and kube-proxy has written
// its rules; it returns at once, after checking that, when the cluster is already
// running. The daemons outlive the calling process: Stop ends them. Progress goes to log.
func Start(ctx context.Context, o Options, log io.Writer) (*Cluster, error) {
	if err := checkTools(o); err != nil {
		return nil, err
	}
	c := &Cluster{Options: o}
	up, err := c.runningComponents()
	if err != nil {
		return nil, err
	}
	if up {
		fmt.Fprintf(log, "cluster: already running in %s\n", o.Dir)
		return c, c.phase(log, "node Ready", func() error { return waitNodeReady(ctx, o, time.Time{}, 2*time.Minute) })
	}
	started := time.Now()
	steps := []struct {
		name string
		run  func() error
	}{
		{"clean up after the last run", func() error {
			if err := checkAddressFree(o); err != nil {
				return err
			}
			return cleanup(o, io.Discard)
		}},
		{"prepare the host", func() error { return prepare(o) }},
		{"containerd and the pause image", func() error { return c.startContainerd(ctx) }},
		{"etcd and kube-apiserver", func() error { return c.startAll(ctx, "etcd", "kube-apiserver") }},
		{"controller manager, scheduler, kubelet, kube-proxy", func() error {
			return c.startAll(ctx, "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy")
		}},
		{"node Ready", func() error { return waitNodeReady(ctx, o, started, 2*time.Minute) }},
	}
	for _, s := range steps {
		if err := c.phase(log, s.name, s.run); err != nil {
			return c, err
		}
	}
	return c, nil
}

// phase runs one step, timing it.
func (c *Cluster) phase(log io.Writer, name string, run func() error) error {
	start := time.Now()
	err := run()
	took := time.Since(start).Round(10 * time.Millisecond)
	c.Took = append(c.Took, Phase{Name: name, Took: took})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	fmt.Fprintf(log, "cluster: %s (%s)\n", name, took)
	return nil
}

// runningComponents says whether every component runs; some but not all is an error.
func (c *Cluster) runningComponents() (bool, error) {
	var up, down []string
	for _, comp := range components(c.Options) {
		if running(c.Options, comp) > 0 {
			up = append(up, comp.name)
		} else {
			down = append(down, comp.name)
		}
	}
	if len(up) > 0 && len(down) > 0 {
		return false, fmt.Errorf("the cluster in %s runs only partly (%v down; logs in %s): make cluster-stop, then make cluster",
			c.Dir, down, c.path("logs"))
	}
	return len(down) == 0, nil
}

// checkAddressFree refuses to start when something already serves the API server's
// address: a cluster started from another directory, whose network the clean-up would
// pull from under it.
func checkAddressFree(o Options) error {
	if !isLocalAddress(o.NodeIP) {
		return nil // nothing on this machine serves it (a dial could reach a router that answers anything)
	}
	addr := net.JoinHostPort(o.NodeIP, strconv.Itoa(o.APIPort))
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil
	}
	conn.Close()
	return fmt.Errorf("%s is already served, by a cluster started from another directory? (make cluster-stop stops the one in .terraplane/cluster; go run ./hack/cluster stop -dir DIR another)", addr)
}

// isLocalAddress says whether ip is assigned to an interface of this machine.
func isLocalAddress(ip string) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.String() == ip {
			return true
		}
	}
	return false
}

// checkTools fails naming what installs a missing binary.
func checkTools(o Options) error {
	if os.Geteuid() != 0 {
		return errors.New("a cluster node needs root (containerd, runc, mounts, iptables)")
	}
	var missing []string
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy"} {
		if _, err := os.Stat(filepath.Join(o.Bin, b)); err != nil {
			missing = append(missing, filepath.Join(o.Bin, b))
		}
	}
	for _, b := range []string{"containerd", "ctr", "runc", "iptables", "ip"} {
		if _, err := exec.LookPath(b); err != nil {
			missing = append(missing, b)
		}
	}
	for _, p := range []string{filepath.Join(o.CNIBin, "bridge"), filepath.Join(o.CNIBin, "host-local"), filepath.Join(o.CNIBin, "loopback"), o.PauseTarball} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %v: run `make cluster` or `make tools-test` (hack/install-tools.sh cluster installs them)", missing)
	}
	return nil
}

// prepare readies the host and the directory: the kernel settings recorded, the node
// address on lo, the cgroup root, certificates, kubeconfigs and configuration files.
func prepare(o Options) error {
	if o.Fresh {
		for _, d := range []string{"etcd", "kubelet", "logs"} {
			if err := os.RemoveAll(o.path(d)); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return err
	}
	for _, step := range []func(Options) error{saveSysctls, addNodeAddress, func(Options) error { return makeCgroupRoot() }, ensurePKI, writeConfigs} {
		if err := step(o); err != nil {
			return err
		}
	}
	return nil
}

// component returns the named component.
func (c *Cluster) component(name string) component {
	for _, comp := range components(c.Options) {
		if comp.name == name {
			return comp
		}
	}
	panic("cluster: no component " + name)
}

// startAll starts the named components, then waits for each to be healthy.
func (c *Cluster) startAll(ctx context.Context, names ...string) error {
	for _, n := range names {
		if err := startDaemon(c.Options, c.component(n)); err != nil {
			return err
		}
	}
	for _, n := range names {
		if err := c.waitHealthy(ctx, c.component(n)); err != nil {
			return err
		}
	}
	return nil
}

// startContainerd starts containerd, waits for its socket and imports the pause image
// unless containerd has it.
func (c *Cluster) startContainerd(ctx context.Context) error {
	if err := startDaemon(c.Options, c.component("containerd")); err != nil {
		return err
	}
	if err := c.waitHealthy(ctx, c.component("containerd")); err != nil {
		return err
	}
	have, err := c.HasImage(ctx, PauseImage)
	if err != nil || have {
		return err
	}
	return c.ImportImage(ctx, c.PauseTarball)
}
