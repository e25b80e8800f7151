// Command terraplane is Terraplane's one binary: the controller, the local dev control
// plane, and tools.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	ctrl.SetLogger(zap.New(zap.UseDevMode(false)))
	root := &cobra.Command{
		Use:           "terraplane",
		Short:         "A Terraform-backed infrastructure control plane for Kubernetes",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(controllerCommand(), devCommand(), moduleCommand(), stackCommand(), migrateCommand(), exportCommand(), unlockCommand())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
