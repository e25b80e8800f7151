// Command registry serves an in-memory OCI registry (go-containerregistry's, the one the
// tests use) on a loopback address, to try `make release REGISTRY=...` and `helm install
// oci://...` on make cluster's node, which pulls from loopback over plain HTTP:
//
//	go run ./hack/registry [-addr 127.0.0.1:5000]
//
// What it holds is lost when it stops.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:5000", "loopback address to listen on")
	verbose := flag.Bool("v", false, "log every request")
	flag.Parse()
	logs := io.Discard
	if *verbose {
		logs = os.Stderr
	}
	if err := serve(*addr, log.New(logs, "registry: ", log.LstdFlags)); err != nil {
		fmt.Fprintln(os.Stderr, "registry:", err)
		os.Exit(1)
	}
}

// serve listens on addr, which must be a loopback address: the registry has no
// authentication.
func serve(addr string, logger *log.Logger) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("address %q is not on loopback: this registry has no authentication", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	fmt.Printf("registry: serving %s (in memory; make release REGISTRY=%s/platform)\n", l.Addr(), l.Addr())
	return http.Serve(l, registry.New(registry.Logger(logger)))
}
