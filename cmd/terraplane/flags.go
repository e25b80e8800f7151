package main

import (
	"flag"

	"sigs.k8s.io/controller-runtime/pkg/client/config"
)

// goFlags exposes controller-runtime's --kubeconfig flag.
func goFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("terraplane", flag.ContinueOnError)
	config.RegisterFlags(fs)
	return fs
}
