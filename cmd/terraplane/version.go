package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/spf13/cobra"

	"terraplane.io/terraplane/internal/engine"
)

// version is set at build time; make build, make image and make release set it to
// `git describe --tags --always --dirty`: go build -ldflags "-X main.version=v1.2.3".
var version = ""

// buildVersion is the version set at build time, else what Go recorded of the build.
func buildVersion() string {
	info, _ := debug.ReadBuildInfo()
	return versionFrom(version, info)
}

// versionFrom is stamped when set; else the module version Go recorded (a tagged `go
// install`); else the commit Go recorded from git, shortened as git describe --always
// shortens it, with -dirty for uncommitted changes; else "devel".
func versionFrom(stamped string, info *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	if info == nil {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var commit, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 7:
			commit = s.Value[:7]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if commit == "" {
		return "devel"
	}
	return commit + dirty
}

func versionCommand() *cobra.Command {
	var terraform string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print Terraplane's version and the terraform (or OpenTofu) it would run",
		Long: `Print Terraplane's version and the terraform (or OpenTofu) it would run. terraplane
--version prints the same.`,
		Example: `  terraplane version
  terraplane version --terraform tofu
  terraplane version -o json`,
		Args: cobra.NoArgs,
	}
	out := bindOutput(cmd, "", "json", "yaml")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return printVersion(cmd, terraform, out.format) }
	cmd.Flags().StringVar(&terraform, "terraform", "", "terraform or OpenTofu binary, a path or a name on PATH such as tofu (default: terraform)")
	return cmd
}

// versionInfo is what version prints.
type versionInfo struct {
	Terraplane string `json:"terraplane"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
	Terraform  string `json:"terraform"`
}

// printVersion prints Terraplane's version and terraform's, as text or data (format).
func printVersion(cmd *cobra.Command, terraform, format string) error {
	v := versionInfo{Terraplane: buildVersion(), Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Terraform: terraformVersion(cmd.Context(), terraform)}
	out := cmd.OutOrStdout()
	if format != "" {
		return (&output{format: format}).print(out, v)
	}
	fmt.Fprintf(out, "terraplane %s %s %s\n", v.Terraplane, v.Go, v.Platform)
	fmt.Fprintln(out, "terraform  "+v.Terraform)
	return nil
}

// terraformVersion is "<version> (<path>)" of the binary the engine would run, or why
// there is none.
func terraformVersion(ctx context.Context, name string) string {
	path, err := engine.FindTerraform(name)
	if err != nil {
		return "not found: install terraform >= 1.5 or OpenTofu on PATH, or pass --terraform"
	}
	tf, err := tfexec.NewTerraform(os.TempDir(), path)
	if err != nil {
		return fmt.Sprintf("unusable (%s): %v", path, err)
	}
	v, _, err := tf.Version(ctx, true)
	if err != nil {
		return fmt.Sprintf("unusable (%s): %v", path, err)
	}
	return fmt.Sprintf("%s (%s)", v, path)
}
