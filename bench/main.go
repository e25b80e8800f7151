// Command bench measures Terraplane against the raw terraform CLI, side by side in one
// run: N claims of a kind whose module has one terraform_data resource, a variant with
// the random provider and one with the bundled S3 kind and the aws provider on a local
// MinIO; state in the cluster, the same parallelism for both, and one controller or
// several sharded replicas (-replicas). It writes a
// Markdown table and a PNG chart under bench/results/ and prints the table.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

type options struct {
	ns          []int
	parallelism int
	variants    []string
	idle        time.Duration
	out         string
	binary      string
	replicas    int
}

func main() {
	var o options
	ns := flag.String("n", "1,10,50", "comma-separated claim counts")
	variants := flag.String("variants", "terraform_data,random,aws-s3", "variants to run: terraform_data, random (ModuleClass claims), aws-s3 (the bundled S3 kind on MinIO, hashicorp/aws)")
	flag.IntVar(&o.parallelism, "parallelism", 10, "concurrent terraform processes, for the controller and for raw terraform alike")
	flag.DurationVar(&o.idle, "idle", 60*time.Second, "idle window measured at the largest N")
	flag.StringVar(&o.out, "out", "bench/results", "directory for results.md and chart.png")
	flag.StringVar(&o.binary, "terraplane", "bin/terraplane", "the terraplane binary (make build)")
	flag.IntVar(&o.replicas, "replicas", 1, "controller replicas; more than one shards the managed resources between them, and they share the parallelism")
	flag.Parse()
	for _, s := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bad -n %q\n", s)
			os.Exit(2)
		}
		o.ns = append(o.ns, n)
	}
	o.variants = strings.Split(*variants, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	bin, err := filepath.Abs(o.binary)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s not found: run `make build` (make bench does)", bin)
	}
	h, err := newHarness(ctx, bin, o.parallelism, o.replicas, o.variants)
	if err != nil {
		return err
	}
	defer h.close()
	var rows []row
	for _, variant := range o.variants {
		for i, n := range o.ns {
			idle := time.Duration(0)
			if i == len(o.ns)-1 {
				idle = o.idle
			}
			say("%s, N=%d: raw terraform", variant, n)
			raw, err := h.runRaw(ctx, variant, n, o.parallelism)
			if err != nil {
				return err
			}
			say("%s, N=%d: terraplane", variant, n)
			tp, err := h.runClaims(ctx, variant, n, idle)
			if err != nil {
				return err
			}
			rows = append(rows, row{variant: variant, n: n, raw: raw, tp: tp})
		}
	}
	return writeResults(o, rows)
}

func say(format string, args ...any) {
	fmt.Printf("==> %s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
