package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"
)

// Formats Print takes: "" (a table), wide (a table with messages), json, yaml and dot.
var Formats = []string{"wide", "json", "yaml", "dot"}

// Print writes the tree in format; now ages the nodes.
func Print(w io.Writer, root *Node, format string, now time.Time) error {
	switch format {
	case "", "wide":
		return printTable(w, root, format == "wide", now)
	case "json":
		return PrintData(w, root, "json")
	case "yaml":
		return PrintData(w, root, "yaml")
	case "dot":
		return printDot(w, root)
	}
	return fmt.Errorf("unknown output format %q", format)
}

// PrintData writes v as indented JSON or as YAML.
func PrintData(w io.Writer, v any, format string) error {
	var b []byte
	var err error
	if format == "yaml" {
		b, err = yaml.Marshal(v)
	} else {
		b, err = json.MarshalIndent(v, "", "  ")
		b = append(b, '\n')
	}
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

func printTable(w io.Writer, root *Node, wide bool, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "NAME\tNAMESPACE\tREADY\tSYNCED\tSTATUS\tAGE"
	if wide {
		header += "\tMESSAGE"
	}
	fmt.Fprintln(tw, header)
	var row func(n *Node, prefix, branch string)
	row = func(n *Node, prefix, branch string) {
		line := fmt.Sprintf("%s%s%s\t%s\t%s\t%s\t%s\t%s", prefix, branch, n.Display, dash(n.Namespace), dash(n.Ready), dash(n.Synced), dash(n.Status()), Age(n.Created, now))
		if wide {
			line += "\t" + dash(oneLine(n.Message))
		}
		fmt.Fprintln(tw, line)
		if branch == "├─ " {
			prefix += "│  "
		} else if branch == "└─ " {
			prefix += "   "
		}
		for i, c := range n.Children {
			b := "├─ "
			if i == len(n.Children)-1 {
				b = "└─ "
			}
			row(c, prefix, b)
		}
	}
	row(root, "", "")
	return tw.Flush()
}

// Age is how long ago t was, as kubectl prints it; "-" when unknown.
func Age(t *metav1.Time, now time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps a message on one table row.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// printDot writes a Graphviz digraph: one box per node, coloured by health.
func printDot(w io.Writer, root *Node) error {
	var b strings.Builder
	b.WriteString("digraph trace {\n  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n")
	id := 0
	var visit func(n *Node) int
	visit = func(n *Node) int {
		me := id
		id++
		label := []string{n.Display}
		if n.Namespace != "" {
			label = append(label, "namespace: "+n.Namespace)
		}
		if n.Ready != "" || n.Synced != "" {
			label = append(label, "Ready="+dash(n.Ready)+" Synced="+dash(n.Synced))
		}
		if s := n.Status(); s != "" {
			label = append(label, s)
		}
		fmt.Fprintf(&b, "  n%d [label=%s, fillcolor=%q];\n", me, strconv.Quote(strings.Join(label, "\n")), colour(n))
		for _, c := range n.Children {
			fmt.Fprintf(&b, "  n%d -> n%d;\n", me, visit(c))
		}
		return me
	}
	visit(root)
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func colour(n *Node) string {
	switch {
	case n.Error == "Forbidden":
		return "#e2e3e5" // grey: not known
	case n.Plan != nil && n.Plan.Pending:
		return "#fff3cd" // yellow: waits for someone
	case !n.Healthy():
		return "#f8d7da" // red
	case n.Ready == "True" || n.Error == "" && n.Ready == "":
		return "#d4edda" // green
	}
	return "#ffffff"
}
