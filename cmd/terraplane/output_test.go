package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestExitCodes runs the command tree in-process: usage errors exit 2 and point at
// --help, other failures exit 1.
func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"no-such-command"}, 2, `unknown command "no-such-command"`},
		{[]string{"plan", "no-such-command"}, 2, `unknown command "no-such-command" for "terraplane plan"`},
		{[]string{"version", "extra"}, 2, `unknown command "extra"`},
		{[]string{"version", "--no-such-flag"}, 2, "unknown flag: --no-such-flag"},
		{[]string{"version", "-o", "xml"}, 2, `"xml" is not an output format`},
		{[]string{"module", "inspect", ".", "-o", "skeleton.yaml"}, 2, "write the file with --out skeleton.yaml"},
		{[]string{"claim", "generate", "."}, 2, `required flag(s) "group", "kind" not set`},
		{[]string{"trace", "photos"}, 2, "name the resource as KIND/NAME"},
		{[]string{"abandon"}, 2, "KIND/NAME"},
		{[]string{"abandon", "network"}, 2, "name the resource as KIND/NAME"},
		{[]string{"abandon", "module/a", "module/b"}, 2, "name one resource"},
		{[]string{"trace", "bucket/photos", "extra"}, 2, "name one resource"},
		{[]string{"module", "inspect", "/no/such/module"}, 1, "/no/such/module does not exist"},
		{[]string{"migrate", "/no/such/dir"}, 1, "/no/such/dir is not a directory"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			root := rootCommand()
			root.SetArgs(tc.args)
			root.SetOut(&bytes.Buffer{})
			cmd, err := root.ExecuteContextC(context.Background())
			if err == nil {
				t.Fatal("the command succeeded")
			}
			var stderr bytes.Buffer
			if code := fail(&stderr, cmd, err); code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, stderr.String())
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if !strings.Contains(lines[0], tc.says) || (len(lines) == 2) != (tc.code == 2) {
				t.Errorf("stderr %q, want the error %q and, for a usage error only, a pointer to --help", stderr.String(), tc.says)
			}
		})
	}
}

// TestNoFlagIsF: -f names an input in kubectl (kubectl apply -f), so no command takes
// -f; a file or directory to write is --out, which has no short form.
func TestNoFlagIsF(t *testing.T) {
	var walk func(c *cobra.Command)
	outs := 0
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Shorthand == "f" {
				t.Errorf("%s --%s takes -f", c.CommandPath(), f.Name)
			}
			if f.Name == "out" {
				outs++
				if f.Shorthand != "" {
					t.Errorf("%s --out has the short form -%s", c.CommandPath(), f.Shorthand)
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(rootCommand())
	if outs < 4 {
		t.Errorf("%d commands take --out; want export, module inspect, claim generate and stack build", outs)
	}
}
