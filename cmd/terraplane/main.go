// Command terraplane is Terraplane's one binary: the controller, the local dev control
// plane, and tools.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:              "terraplane",
		Short:            "A Terraform-backed infrastructure control plane for Kubernetes",
		SilenceUsage:     true,
		SilenceErrors:    true,
		PersistentPreRun: setupLogging,
	}
	root.AddCommand(controllerCommand(), devCommand(), moduleCommand(), claimCommand(), stackCommand(), migrateCommand(), exportCommand(), unlockCommand(),
		versionCommand(), planCommand(), approveCommand())
	if cmd, err := root.ExecuteContextC(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "error: "+oneLine(err))
		if strings.Contains(err.Error(), "arg(s)") || strings.HasPrefix(err.Error(), "unknown ") {
			fmt.Fprintf(os.Stderr, "see %s --help\n", cmd.CommandPath())
		}
		os.Exit(1)
	}
}

// oneLine joins a multi-line error (terraform's, say) into one line.
func oneLine(err error) string {
	var parts []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" && strings.Trim(l, "│╷╵─ ") != "" {
			parts = append(parts, strings.TrimSpace(strings.TrimLeft(l, "│╷╵ ")))
		}
	}
	return strings.Join(parts, " ")
}
