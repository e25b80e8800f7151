package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"

	"terraplane.io/terraplane/internal/plandoc"
)

// Placeholders RenderPlan shows instead of values.
const (
	sensitiveValue = "(sensitive value)"
	unknownValue   = "(known after apply)"
)

// RenderPlan shows a plan the way `terraform plan` does: one block per resource change
// with its changed attributes, the output changes, and the totals. Sensitive values show
// as "(sensitive value)", unknown ones as "(known after apply)".
func RenderPlan(js *tfjson.Plan) string {
	spreadSensitivity(js)
	var b strings.Builder
	var add, change, destroy, imports int
	b.WriteString("Terraform will perform the following actions:\n")
	for _, rc := range js.ResourceChanges {
		if rc.Change == nil || rc.Mode == tfjson.DataResourceMode || rc.Change.Actions.Read() {
			continue
		}
		a := rc.Change.Actions
		importing := rc.Change.Importing != nil
		if a.NoOp() && !importing {
			continue
		}
		switch {
		case a.Replace():
			add, destroy = add+1, destroy+1
		case a.Create():
			add++
		case a.Delete():
			destroy++
		case a.Update():
			change++
		}
		if importing {
			imports++
		}
		renderResource(&b, rc)
	}
	renderOutputs(&b, js.OutputChanges)
	fmt.Fprintf(&b, "\nPlan: %d to add, %d to change, %d to destroy", add, change, destroy)
	if imports > 0 {
		fmt.Fprintf(&b, ", %d to import", imports)
	}
	b.WriteString(".\n")
	return b.String()
}

// renderResource writes one resource change block.
func renderResource(b *strings.Builder, rc *tfjson.ResourceChange) {
	a := rc.Change.Actions
	verb, sym := "will be updated in-place", "  ~"
	switch {
	case a.DestroyBeforeCreate():
		verb, sym = "must be replaced", "-/+"
	case a.CreateBeforeDestroy():
		verb, sym = "must be replaced", "+/-"
	case a.Create():
		verb, sym = "will be created", "  +"
	case a.Delete():
		verb, sym = "will be destroyed", "  -"
	case a.NoOp():
		verb, sym = "will be imported", "   "
	}
	if rc.Change.Importing != nil && !a.NoOp() {
		verb += ", after being imported"
	}
	fmt.Fprintf(b, "\n  # %s %s\n", rc.Address, verb)
	fmt.Fprintf(b, "%s resource %q %q {\n", sym, rc.Type, rc.Name)
	before, _ := rc.Change.Before.(map[string]any)
	after, _ := rc.Change.After.(map[string]any)
	unknown, _ := rc.Change.AfterUnknown.(map[string]any)
	// A value sensitive on either side is masked on both: terraform does not always mark
	// the prior value of an attribute that became sensitive (terraform_data's output).
	sens, _ := unionMask(rc.Change.BeforeSensitive, rc.Change.AfterSensitive).(map[string]any)
	forces := replacePaths(rc.Change.ReplacePaths)
	type line struct{ sym, key, text string }
	var lines []line
	hidden, width := 0, 0
	for _, k := range attributeKeys(before, after, unknown) {
		old := shown(before[k], sens[k], nil)
		_, inBefore := before[k]
		isUnknown := unknown[k] == true
		_, inAfter := after[k]
		cur := shown(after[k], sens[k], unknown[k])
		var l line
		switch {
		case a.Create() && !a.Delete():
			if !inAfter && !isUnknown || after[k] == nil && !isUnknown {
				continue
			}
			l = line{"+", k, cur}
		case a.Delete() && !a.Create():
			if before[k] == nil {
				continue
			}
			l = line{"-", k, old + " -> null"}
		case !isUnknown && reflect.DeepEqual(before[k], after[k]):
			hidden++
			continue
		case (!inBefore || before[k] == nil) && (inAfter || isUnknown):
			l = line{"+", k, cur}
		case !inAfter && !isUnknown || after[k] == nil && !isUnknown:
			l = line{"-", k, old + " -> null"}
		default:
			l = line{"~", k, old + " -> " + cur}
		}
		if forces[k] {
			l.text += " # forces replacement"
		}
		lines = append(lines, l)
		width = max(width, len(k))
	}
	for _, l := range lines {
		fmt.Fprintf(b, "      %s %-*s = %s\n", l.sym, width, l.key, l.text)
	}
	if hidden > 0 {
		fmt.Fprintf(b, "        # (%d unchanged attribute%s hidden)\n", hidden, plural(hidden))
	}
	b.WriteString("    }\n")
}

// renderOutputs writes the output changes.
func renderOutputs(b *strings.Builder, outputs map[string]*tfjson.Change) {
	names := make([]string, 0, len(outputs))
	for name, oc := range outputs {
		if oc != nil && !oc.Actions.NoOp() {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return
	}
	sort.Strings(names)
	b.WriteString("\nChanges to Outputs:\n")
	for _, name := range names {
		oc := outputs[name]
		sens := unionMask(oc.BeforeSensitive, oc.AfterSensitive)
		cur := shown(oc.After, sens, oc.AfterUnknown)
		switch {
		case oc.Actions.Create():
			fmt.Fprintf(b, "  + %s = %s\n", name, cur)
		case oc.Actions.Delete():
			fmt.Fprintf(b, "  - %s = %s -> null\n", name, shown(oc.Before, sens, nil))
		default:
			fmt.Fprintf(b, "  ~ %s = %s -> %s\n", name, shown(oc.Before, sens, nil), cur)
		}
	}
}

// attributeKeys are the top-level attribute names of a change, sorted.
func attributeKeys(objs ...map[string]any) []string {
	seen := map[string]bool{}
	for _, o := range objs {
		for k := range o {
			seen[k] = true
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// replacePaths are the top-level attributes whose change forces a replacement.
func replacePaths(paths []any) map[string]bool {
	out := map[string]bool{}
	for _, p := range paths {
		if steps, ok := p.([]any); ok && len(steps) > 0 {
			if name, ok := steps[0].(string); ok {
				out[name] = true
			}
		}
	}
	return out
}

// shown is how a value appears in a plan: masked where sensitive (anywhere inside),
// a placeholder where unknown, otherwise as HCL would write it.
func shown(v, sensitive, unknown any) string {
	switch {
	case unknown == true:
		return unknownValue
	case containsTrue(sensitive):
		return sensitiveValue
	}
	return literal(v)
}

// unionMask is a sensitivity mask marking what either a or b marks.
func unionMask(a, b any) any { return plandoc.UnionMask(a, b) }

// containsTrue reports whether a sensitivity mask marks anything.
func containsTrue(mask any) bool {
	switch m := mask.(type) {
	case bool:
		return m
	case map[string]any:
		for _, x := range m {
			if containsTrue(x) {
				return true
			}
		}
	case []any:
		for _, x := range m {
			if containsTrue(x) {
				return true
			}
		}
	}
	return false
}

// literal writes a value as HCL does: quoted strings, bare numbers and booleans, null,
// and JSON for collections.
func literal(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
