package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

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
		Short: "Print Terraplane's version and the Terraform or OpenTofu it would run",
		Long: `Print Terraplane's version and the Terraform or OpenTofu binary it would run, named
for what it is (terraform or opentofu), with its version and path. terraplane --version
prints the same.`,
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

// versionInfo is what version prints. The binary terraform commands run is named for
// what it is: Terraform or OpenTofu (or, when none is found, what --terraform names).
type versionInfo struct {
	Terraplane string `json:"terraplane"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
	// Terraform is "<version> (<path>)" of a Terraform binary, or why there is none.
	Terraform string `json:"terraform,omitempty"`
	// OpenTofu is "<version> (<path>)" of an OpenTofu binary.
	OpenTofu string `json:"opentofu,omitempty"`
}

// printVersion prints Terraplane's version and terraform's, as text or data (format).
func printVersion(cmd *cobra.Command, terraform, format string) error {
	v := versionInfo{Terraplane: buildVersion(), Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	product, about := terraformVersion(cmd.Context(), terraform)
	if product == productOpenTofu {
		v.OpenTofu = about
	} else {
		v.Terraform = about
	}
	out := cmd.OutOrStdout()
	if format != "" {
		return (&output{format: format}).print(out, v)
	}
	fmt.Fprintf(out, "terraplane %s %s %s\n", v.Terraplane, v.Go, v.Platform)
	fmt.Fprintf(out, "%-10s %s\n", product, about)
	return nil
}

// The products a terraform binary may be, as version names them.
const (
	productTerraform = "terraform"
	productOpenTofu  = "opentofu"
)

// terraformVersion is the product of the binary the engine would run and "<version>
// (<path>)", or terraform and why there is none.
func terraformVersion(ctx context.Context, name string) (product, about string) {
	path, err := engine.FindTerraform(name)
	if err != nil {
		return productTerraform, "not found: install terraform >= 1.5 or OpenTofu on PATH, or pass --terraform"
	}
	cmd := exec.CommandContext(ctx, path, "version")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if err != nil {
		return productTerraform, fmt.Sprintf("unusable (%s): %v", path, err)
	}
	product, v, ok := parseTerraformVersion(string(out))
	if !ok {
		return productTerraform, fmt.Sprintf("unusable (%s): its version says neither Terraform nor OpenTofu: %q", path, firstLine(string(out)))
	}
	return product, fmt.Sprintf("%s (%s)", v, path)
}

// versionLine is the first line `terraform version` and `tofu version` print.
var versionLine = regexp.MustCompile(`^(Terraform|OpenTofu) v(\d+\.\d+\.\d+\S*)`)

// parseTerraformVersion reads the product and version from what `version` printed.
func parseTerraformVersion(out string) (product, version string, ok bool) {
	m := versionLine.FindStringSubmatch(firstLine(out))
	if m == nil {
		return "", "", false
	}
	return strings.ToLower(m[1]), m[2], true
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}
