// Command terraplane is Terraplane's one binary: the controller, the local dev control
// plane, and tools.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"terraplane.io/terraplane/internal/kref"
)

func main() {
	root := rootCommand()
	if cmd, err := root.ExecuteContextC(context.Background()); err != nil {
		os.Exit(fail(os.Stderr, cmd, err))
	}
}

// rootCommand is terraplane with every command.
func rootCommand() *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:   "terraplane",
		Short: "A Terraform-backed infrastructure control plane for Kubernetes",
		Long: `A Terraform-backed infrastructure control plane for Kubernetes.

The commands follow kubectl's conventions: -o is the output format (json, yaml, wide,
where a command takes them; files are written with --out), -n defaults to the kubeconfig
context's namespace (for managed resources, Providers and non-portable classes, to the
admin namespace, terraplane-system or --admin-namespace), resources are named KIND/NAME,
and a usage error exits 2, any other failure 1.`,
		Example: `  terraplane trace bucket/photos -n demo
  terraplane get approvals
  terraplane --version`,
		Args:             cobra.NoArgs,
		SilenceUsage:     true,
		SilenceErrors:    true,
		PersistentPreRun: setupLogging,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				return printVersion(cmd, "", "")
			}
			return cmd.Help()
		},
	}
	root.Flags().BoolVar(&showVersion, "version", false, "print the version, as terraplane version does")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return kref.Usagef("%s", err.Error()) })
	root.AddCommand(controllerCommand(), stackManagerCommand(), runnerCommand(), devCommand(), moduleCommand(), claimCommand(), stackCommand(), migrateCommand(), exportCommand(), unlockCommand(), abandonCommand(),
		versionCommand(), planCommand(), approveCommand(), traceCommand(), getCommand(), rolloutCommand(), policyCommand())
	usageArgs(root)
	return root
}

// fail prints err as one line (with a pointer to --help for a usage error) and is the
// exit code: 2 for a usage error, 1 for any other failure.
func fail(stderr io.Writer, cmd *cobra.Command, err error) int {
	fmt.Fprintln(stderr, "error: "+oneLine(err))
	if isUsage(err) {
		fmt.Fprintf(stderr, "see %s --help\n", cmd.CommandPath())
		return 2
	}
	return 1
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
