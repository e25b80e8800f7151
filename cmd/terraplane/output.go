package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"terraplane.io/terraplane/internal/kref"
	"terraplane.io/terraplane/internal/trace"
)

// output is -o, kubectl's output format: empty for the command's own text, else one of
// the formats the command takes (json, yaml, wide, dot).
type output struct {
	format  string
	formats []string
	// file names the flag that writes a file (--out), for commands where -o used to.
	file string
}

// bindOutput registers -o on cmd with the formats it takes; file, when set, is the
// flag that took over -o's old meaning (a file to write).
func bindOutput(cmd *cobra.Command, file string, formats ...string) *output {
	o := &output{formats: formats, file: file}
	help := "output format: " + strings.Join(formats, "|") + " (default: text for people)"
	if file != "" {
		help += "; -o used to name the file to write, which is now " + file
	}
	cmd.Flags().VarP(o, "output", "o", help)
	return o
}

// Set accepts one of the formats, and says where a file name belongs.
func (o *output) Set(s string) error {
	if slices.Contains(o.formats, s) {
		o.format = s
		return nil
	}
	if o.file != "" {
		return fmt.Errorf("%q is not an output format (%s): -o is the output format, as in kubectl; write the file with %s %s", s, strings.Join(o.formats, "|"), o.file, s)
	}
	return fmt.Errorf("%q is not an output format: use one of %s", s, strings.Join(o.formats, "|"))
}

// Type is how the help names the flag's value.
func (o *output) Type() string { return "format" }

// String is the format chosen.
func (o *output) String() string { return o.format }

// data reports whether the output is data (json or yaml) rather than text.
func (o *output) data() bool { return o.format == "json" || o.format == "yaml" }

// print writes v in the data format chosen.
func (o *output) print(w io.Writer, v any) error { return trace.PrintData(w, v, o.format) }

// usageArgs wraps every command's argument check so that a wrong argument count or
// shape is a usage error (exit 2), as a flag error is.
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return kref.Usagef("%s", err.Error())
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// group makes cmd a command group: alone it prints its help; followed by a word that is
// none of its commands, it is a usage error.
func group(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return kref.Usagef("unknown command %q for %q", args[0], c.CommandPath())
		}
		return c.Help()
	}
	return cmd
}

// isUsage reports whether err is a usage error: a bad flag or argument, an unknown
// command, a missing required flag.
func isUsage(err error) bool {
	if kref.IsUsage(err) {
		return true
	}
	msg := err.Error()
	for _, p := range []string{"unknown command ", "unknown flag", "unknown shorthand flag", "required flag(s) ", "if any flags in the group", "invalid argument ", "flag needs an argument", "bad flag syntax"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// refArgs checks that the arguments name one resource, as KIND/NAME or KIND NAME,
// before anything reaches the cluster.
func refArgs(_ *cobra.Command, args []string) error {
	ref, err := kref.Args(args)
	if err != nil {
		return err
	}
	_, _, err = kref.Split(ref)
	return err
}
