package main

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"terraplane.io/terraplane/internal/stackpkg"
)

// stackCommand is `terraplane stack build|push|inspect` for stack authors.
func stackCommand() *cobra.Command {
	cmd := group(&cobra.Command{Use: "stack", Short: "Build, push and inspect stack packages",
		Example: `  terraplane stack build ./wordpress-stack
  terraplane stack push ./wordpress-stack registry.example.com/stacks/wordpress:v1.2.0`})
	var file string
	build := &cobra.Command{
		Use:   "build DIR",
		Short: "Validate the package in DIR/.registry and build its OCI image (--out writes an image tarball)",
		Long: `Validate the package in DIR/.registry and build its OCI image. --out writes the image as a
tarball (it was -o before); -o json or -o yaml prints what was built as data.`,
		Example: `  terraplane stack build ./wordpress-stack
  terraplane stack build ./wordpress-stack --out wordpress.tar -o json`,
		Args: cobra.ExactArgs(1),
	}
	buildOut := bindOutput(build, "--out", "json", "yaml")
	build.RunE = func(cmd *cobra.Command, args []string) error {
		files, err := stackpkg.ReadDir(args[0], stackpkg.DefaultLimits)
		if err != nil {
			return err
		}
		img, pkg, err := stackpkg.Build(files)
		if err != nil {
			return err
		}
		d, err := img.Digest()
		if err != nil {
			return fmt.Errorf("digest: %w", err)
		}
		if file != "" {
			tag, err := name.NewTag("stack:" + orLatest(pkg.App.Version))
			if err != nil {
				return fmt.Errorf("tag image: %w", err)
			}
			if err := tarball.WriteToFile(file, tag, img); err != nil {
				return err
			}
		}
		if buildOut.data() {
			return buildOut.print(cmd.OutOrStdout(), map[string]any{"title": pkg.App.Title, "version": pkg.App.Version,
				"files": len(files), "owns": pkg.Owned(), "digest": d.String(), "tarball": file})
		}
		fmt.Fprintf(cmd.OutOrStdout(), "built %s %s (%d files, owns %s) %s\n", pkg.App.Title, pkg.App.Version, len(files), strings.Join(pkg.Owned(), ","), d)
		return nil
	}
	build.Flags().StringVar(&file, "out", "", "write the image as a tarball to this file (was -o)")
	push := &cobra.Command{
		Use:   "push DIR REF",
		Short: "Build the package in DIR, push it to REF (registry/repo:tag) and record it in the registry's stack index",
		Long: `Build the package in DIR, push it to REF (registry/repo:tag) and record it in the
registry's stack index, so installs by CRD find it. Registry credentials come from
docker login and credential helpers, as for other OCI tools.`,
		Example: `  terraplane stack push ./wordpress-stack registry.example.com/stacks/wordpress:v1.2.0
  terraplane stack push ./wordpress-stack localhost:5000/stacks/wordpress:dev -o json`,
		Args: cobra.ExactArgs(2),
	}
	pushOut := bindOutput(push, "", "json", "yaml")
	push.RunE = func(cmd *cobra.Command, args []string) error {
		say := progressTo(cmd.ErrOrStderr())
		say("reading the package in %s", args[0])
		files, err := stackpkg.ReadDir(args[0], stackpkg.DefaultLimits)
		if err != nil {
			return err
		}
		reg, err := stackpkg.RegistryOf(args[1])
		if err != nil {
			return err
		}
		say("building and pushing %s (%d files, %d KiB), then recording it in the stack index of %s", args[1], len(files), (files.Size()+1023)/1024, reg)
		pushed, err := stackpkg.Publish(cmd.Context(), reg, args[1], files, registryAuth)
		if err != nil {
			return err
		}
		if pushOut.data() {
			return pushOut.print(cmd.OutOrStdout(), map[string]any{"pushed": pushed})
		}
		fmt.Fprintf(cmd.OutOrStdout(), "pushed %s\n", pushed)
		return nil
	}
	inspect := &cobra.Command{
		Use:     "inspect REF",
		Short:   "Pull the package at REF and print its metadata, CRDs and files",
		Long:    "Pull the package at REF and print its metadata, CRDs and files, as JSON (-o yaml: as YAML).",
		Example: "  terraplane stack inspect registry.example.com/stacks/wordpress:v1.2.0 -o yaml",
		Args:    cobra.ExactArgs(1),
	}
	inspectOut := bindOutput(inspect, "", "json", "yaml")
	inspect.RunE = func(cmd *cobra.Command, args []string) error {
		ref, err := name.ParseReference(args[0])
		if err != nil {
			return fmt.Errorf("parse reference: %w", err)
		}
		p, err := stackpkg.Pull(cmd.Context(), ref, stackpkg.DefaultLimits, registryAuth)
		if err != nil {
			return err
		}
		b, err := stackpkg.Describe(p)
		if err != nil {
			return err
		}
		if inspectOut.format == "yaml" {
			if b, err = yaml.JSONToYAML(b); err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		}
		_, err = fmt.Fprintln(cmd.OutOrStdout(), string(b))
		return err
	}
	index := &cobra.Command{
		Use:     "index REGISTRY",
		Short:   "List the packages in a registry's stack index and the CRDs they own and need",
		Example: "  terraplane stack index registry.example.com -o json",
		Args:    cobra.ExactArgs(1),
	}
	indexOut := bindOutput(index, "", "json", "yaml")
	index.RunE = func(cmd *cobra.Command, args []string) error {
		ix, err := stackpkg.LoadIndex(cmd.Context(), args[0], registryAuth)
		if err != nil {
			return err
		}
		if indexOut.data() {
			return indexOut.print(cmd.OutOrStdout(), ix)
		}
		repos := make([]string, 0, len(ix.Packages))
		for r := range ix.Packages {
			repos = append(repos, r)
		}
		sort.Strings(repos)
		tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PACKAGE\tOWNS\tDEPENDS ON")
		for _, r := range repos {
			e := ix.Packages[r]
			fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Package, strings.Join(e.Owns, ","), orDash(strings.Join(e.DependsOn, ",")))
		}
		return tw.Flush()
	}
	cmd.AddCommand(build, push, inspect, index)
	return cmd
}

// registryAuth uses the credentials of `docker login` and credential helpers, as other
// OCI tools do; registries without credentials are used anonymously.
var registryAuth = remote.WithAuthFromKeychain(authn.DefaultKeychain)

func orLatest(v string) string {
	if v == "" {
		return "latest"
	}
	return v
}
