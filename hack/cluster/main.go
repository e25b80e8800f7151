// Command cluster starts and stops the one-node Kubernetes cluster of `make cluster`
// (internal/cluster) and imports images into its node:
//
//	go run ./hack/cluster start [-dir .terraplane/cluster] [-fresh]
//	go run ./hack/cluster stop [-dir .terraplane/cluster]
//	go run ./hack/cluster import [-dir .terraplane/cluster] bin/image/terraplane.tar
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"terraplane.io/terraplane/internal/cluster"
	"terraplane.io/terraplane/internal/devenv"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cluster start|stop|import [flags]")
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	if err := run(ctx, os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, command string, args []string) error {
	fs := flag.NewFlagSet(command, flag.ExitOnError)
	dir := fs.String("dir", ".terraplane/cluster", "directory holding everything the cluster makes")
	fresh := fs.Bool("fresh", false, "start with no objects (etcd and the kubelet's state emptied)")
	_ = fs.Parse(args)
	o, err := cluster.Options{Dir: *dir, Fresh: *fresh}.Defaults(devenv.CacheDir())
	if err != nil {
		return err
	}
	switch command {
	case "start":
		start := time.Now()
		if _, err := cluster.Start(ctx, o, os.Stdout); err != nil {
			return err
		}
		fmt.Printf("cluster: node %s Ready in %s; kubeconfig %s (API server %s)\n",
			o.NodeName, time.Since(start).Round(100*time.Millisecond), o.Kubeconfig(), o.APIServer())
		fmt.Printf("  kubectl --kubeconfig %s get nodes; make cluster-stop stops it\n", o.Kubeconfig())
		return nil
	case "stop":
		return cluster.Stop(o, os.Stdout)
	case "import":
		if fs.NArg() != 1 {
			return fmt.Errorf("import: name one image tarball")
		}
		c := &cluster.Cluster{Options: o}
		if err := c.ImportImage(ctx, fs.Arg(0)); err != nil {
			return err
		}
		fmt.Println("cluster: imported", fs.Arg(0))
		return nil
	default:
		return fmt.Errorf("unknown command %q (start, stop or import)", command)
	}
}
