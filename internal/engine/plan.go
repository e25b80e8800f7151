package engine

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"

	"terraplane.io/terraplane/internal/plandoc"
)

// Change is what a plan does to one resource instance.
type Change struct {
	// Address of the resource instance.
	Address string
	// Actions are terraform's: create, update, delete (delete and create is a
	// replacement), or no-op for a pure import.
	Actions []string
	// Importing is true when the change imports an existing object.
	Importing bool
	// Tainted is true when terraform replaces the object because it is tainted: its
	// create did not finish (a provisioner or a wait failed part-way).
	Tainted bool
}

// Replaces reports whether the change deletes the object and creates it again.
func (c Change) Replaces() bool { return has(c.Actions, "delete") && has(c.Actions, "create") }

// Destroys reports whether the change deletes or replaces an existing object.
func (c Change) Destroys() bool { return has(c.Actions, "delete") }

func has(actions []string, a string) bool {
	for _, x := range actions {
		if x == a {
			return true
		}
	}
	return false
}

// Counts are a plan's or an apply's changes by kind; a replacement counts only as Replace.
type Counts struct {
	Add, Change, Destroy, Replace, Import int
}

// CountChanges counts changes by kind.
func CountChanges(changes []Change) Counts {
	var c Counts
	for _, ch := range changes {
		switch {
		case ch.Replaces():
			c.Replace++
		case has(ch.Actions, "create"):
			c.Add++
		case has(ch.Actions, "delete"):
			c.Destroy++
		case has(ch.Actions, "update"):
			c.Change++
		}
		if ch.Importing {
			c.Import++
		}
	}
	return c
}

// String is the changes as "+add ~change -destroy", with "-/+replace" and "<=import" when
// there are any.
func (c Counts) String() string {
	s := fmt.Sprintf("+%d ~%d -%d", c.Add, c.Change, c.Destroy)
	if c.Replace > 0 {
		s += fmt.Sprintf(" -/+%d", c.Replace)
	}
	if c.Import > 0 {
		s += fmt.Sprintf(" <=%d", c.Import)
	}
	return s
}

// Plan is a saved terraform plan and what it does.
type Plan struct {
	// ID is a stable hash of the plan's JSON form: the same changes to the same values
	// give the same ID. Sensitive values enter it only keyed (HMAC), so it reveals none.
	// Empty when the plan has no changes.
	ID string
	// Changes are the planned resource changes (reads and no-ops left out).
	Changes []Change
	// OutputsChange is true when outputs change.
	OutputsChange bool
	// File is the saved plan. It holds every variable's value, secret ones too: keep it
	// only where secrets may be kept, and only until it is applied.
	File []byte
	// Text shows the plan as terraform does, sensitive values masked and secret values
	// of the workspace redacted.
	Text string
	// Resources is the number of resource instances the state holds once the plan is
	// applied; -1 when the plan has no changes (the count is then unchanged).
	Resources int
	// PriorResources is the number of resource instances the state held when the plan
	// was made, once refreshed; -1 when the plan has no changes.
	PriorResources int
	// Gone are the addresses of the resource instances the state held that the refresh
	// found deleted outside Terraform: the state as stored held PriorResources+len(Gone).
	Gone []string
	// Outputs are read after a plan with no changes when PlanOptions.Outputs asks.
	Outputs map[string]Output
	// Lock is the dependency lock the plan was made with; applying the plan installs it.
	Lock []byte
	// ProviderChanges are the providers whose version differs from the lock the workspace
	// ran with (PlanOptions.LockedBefore, else its Lock): its Lock moved them, or could
	// not be honoured. Applying the plan moves the workspace to them.
	ProviderChanges []ProviderChange
	// Upgrade is a lock with newer provider versions than the workspace's Lock that its
	// configuration allows, when PlanOptions.LookForUpgrades found one; the plan itself is
	// made with the locked versions.
	Upgrade []byte `json:",omitempty"`
	// Document is the plan's resource changes as terraform's plan JSON gives them, every
	// sensitive value redacted: what plan policies evaluate.
	Document []byte `json:",omitempty"`
}

// HasChanges reports whether applying the plan would change anything: a resource, an
// output, or a provider version.
func (p *Plan) HasChanges() bool {
	return len(p.Changes) > 0 || p.OutputsChange || len(p.ProviderChanges) > 0
}

// ChangesInfrastructure reports whether applying the plan would change a resource, or
// recreate one deleted outside Terraform: outputs and provider versions alone are not
// drift.
func (p *Plan) ChangesInfrastructure() bool {
	return len(p.Changes) > 0 || len(p.Gone) > 0
}

// Destructive lists the changes that delete or replace something.
func (p *Plan) Destructive() []Change {
	var out []Change
	for _, c := range p.Changes {
		if c.Destroys() {
			out = append(out, c)
		}
	}
	return out
}

// PlanOptions tune Plan.
type PlanOptions struct {
	// SkipRefresh plans without refreshing remote objects.
	SkipRefresh bool
	// Outputs reads the outputs when the plan has no changes.
	Outputs bool
	// Key keys the hash of sensitive values in the plan ID; it must stay secret and
	// stable, or the same plan gets another ID.
	Key []byte
	// LookForUpgrades looks for newer provider versions than the workspace's Lock that the
	// configuration allows (the provider sources are looked at once per module and lock
	// while the engine runs), and returns their lock in Plan.Upgrade.
	LookForUpgrades bool
	// LockedBefore is the lock the workspace last ran with, when its Lock is another (a
	// new class revision's): the plan's ProviderChanges count from it.
	LockedBefore []byte
	// Targets limits the plan to these resource addresses (terraform's -target), as
	// the adoption of an interrupted create's objects before a destroy does.
	Targets []string
	// Reread, for a drift check, lets the plan be answered without terraform when the
	// workspace's inputs and state are those of its last plan without changes and its
	// providers, asked that plan's reads again, answer them alike (RereadVerb): the plan
	// then has no changes again. Anything else plans with terraform.
	Reread bool `json:",omitempty"`
}

// Plan makes and saves a plan of the workspace and describes it.
func (e *Engine) Plan(ctx context.Context, ws Workspace, opts PlanOptions) (*Plan, error) {
	locked := ws.Lock
	if opts.LockedBefore != nil {
		locked = opts.LockedBefore
	}
	plan, err := describingAll(e, ws, func() (*Plan, error) { return e.plan(ctx, ws, locked, opts) })
	if err == nil && opts.LookForUpgrades {
		probe := ws
		probe.Lock = plan.Lock // what the plan was made with: newer is newer than that
		plan.Upgrade = e.newerLock(ctx, probe)
	}
	return plan, err
}

// plan plans ws; locked is the lock the workspace's provider changes are counted from.
func (e *Engine) plan(ctx context.Context, ws Workspace, locked []byte, opts PlanOptions) (*Plan, error) {
	if p, ok := e.reread(ctx, ws, opts); ok {
		return p, nil
	}
	e.rereads.forget(ws.ID) // until this plan proves to have no changes
	tf, done, err := e.prepareWithProviders(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer done()
	reads, stopRecording := e.recordReads(ws)
	defer stopRecording()
	lock := readLock(e.Dir(ws.ID))
	moved := ProviderChanges(locked, lock)
	path := filepath.Join(e.Dir(ws.ID), planFile)
	defer os.Remove(path) // a saved plan holds every variable's value, secret ones too
	var changed bool
	_, err = e.runJSON(ctx, ws, "plan", func(ctx context.Context, w io.Writer) (err error) {
		own := []tfexec.PlanOption{tfexec.Out(path), tfexec.Refresh(!opts.SkipRefresh)}
		for _, t := range opts.Targets {
			own = append(own, tfexec.Target(t))
		}
		changed, err = tf.PlanJSON(ctx, w, runOptions[tfexec.PlanOption](e, ws, own...)...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("terraform plan: %w", err)
	}
	if !changed && len(moved) == 0 {
		p := &Plan{Resources: -1, PriorResources: -1, Lock: lock}
		e.rememberReads(ctx, ws, opts, reads, lock)
		if opts.Outputs {
			p.Outputs, err = e.outputs(ctx, ws, tf)
		}
		return p, err
	}
	var js *tfjson.Plan
	err = e.run(ctx, ws, "show", func(ctx context.Context) (err error) {
		js, err = tf.ShowPlanFile(ctx, path, runOptions[tfexec.ShowOption](e, ws)...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("terraform show: %w", err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read saved plan: %w", err)
	}
	p := describePlan(js, opts.Key, moved)
	p.File, p.Lock = file, lock
	p.Text = RedactString(providerText(moved)+RenderPlan(js), ws.secrets())
	if p.Document, err = planDocument(js, ws.secrets()); err != nil {
		return nil, err
	}
	return p, nil
}

// describePlan reads the changes, ID and resulting resource count from a plan's JSON;
// moved are the provider versions it was made with that the lock does not hold.
func describePlan(js *tfjson.Plan, key []byte, moved []ProviderChange) *Plan {
	spreadSensitivity(js)
	p := &Plan{Resources: countInstances(js.PlannedValues), PriorResources: 0}
	if js.PriorState != nil {
		p.PriorResources = countInstances(js.PriorState.Values)
	}
	p.Gone = goneInRefresh(js)
	for _, rc := range js.ResourceChanges {
		if rc.Change == nil || rc.Mode == tfjson.DataResourceMode {
			continue
		}
		importing := rc.Change.Importing != nil
		if rc.Change.Actions.NoOp() && !importing || rc.Change.Actions.Read() {
			continue
		}
		acts := make([]string, 0, len(rc.Change.Actions))
		for _, a := range rc.Change.Actions {
			acts = append(acts, string(a))
		}
		p.Changes = append(p.Changes, Change{Address: rc.Address, Actions: acts, Importing: importing,
			Tainted: rc.ActionReason == tfjson.ActionReasonReplaceBecauseTainted})
	}
	for _, oc := range js.OutputChanges {
		if oc != nil && !oc.Actions.NoOp() {
			p.OutputsChange = true
		}
	}
	p.ProviderChanges = moved
	p.ID = planID(js, key, moved)
	return p
}

// goneInRefresh are the managed resource instances the plan's refresh found deleted
// outside Terraform: terraform reports them as drift (resource_drift) with a delete.
func goneInRefresh(js *tfjson.Plan) []string {
	var gone []string
	for _, rc := range js.ResourceDrift {
		if rc != nil && rc.Change != nil && rc.Mode == tfjson.ManagedResourceMode && rc.Change.Actions.Delete() {
			gone = append(gone, rc.Address)
		}
	}
	return gone
}

// countInstances counts the managed resource instances in a module tree of values.
func countInstances(v *tfjson.StateValues) int {
	if v == nil || v.RootModule == nil {
		return 0
	}
	var walk func(m *tfjson.StateModule) int
	walk = func(m *tfjson.StateModule) int {
		n := 0
		for _, r := range m.Resources {
			if r.Mode == tfjson.ManagedResourceMode {
				n++
			}
		}
		for _, c := range m.ChildModules {
			n += walk(c)
		}
		return n
	}
	return walk(v.RootModule)
}

// planID hashes what the plan does: every resource change and output change, with each
// sensitive value replaced by a keyed hash of it, so that the ID changes with a secret
// value yet reveals nothing about it, and the provider versions it moves to.
func planID(js *tfjson.Plan, key []byte, moved []ProviderChange) string {
	type changeDoc struct {
		Address      string `json:"address"`
		Actions      []string
		Before       any `json:"before"`
		After        any `json:"after"`
		AfterUnknown any `json:"after_unknown"`
		ReplacePaths any `json:"replace_paths"`
		ImportID     string
	}
	doc := struct {
		Resources []changeDoc
		Outputs   map[string]changeDoc
		Providers []ProviderChange `json:",omitempty"` // left out when none: IDs stay as they were
	}{Outputs: map[string]changeDoc{}, Providers: moved}
	mk := func(addr string, c *tfjson.Change) changeDoc {
		sens := unionMask(c.BeforeSensitive, c.AfterSensitive) // as RenderPlan masks them
		d := changeDoc{Address: addr, Before: maskSensitive(c.Before, sens, key),
			After: maskSensitive(c.After, sens, key), AfterUnknown: c.AfterUnknown, ReplacePaths: c.ReplacePaths}
		for _, a := range c.Actions {
			d.Actions = append(d.Actions, string(a))
		}
		if c.Importing != nil {
			d.ImportID = c.Importing.ID
		}
		return d
	}
	for _, rc := range js.ResourceChanges {
		if rc.Change != nil && !rc.Change.Actions.Read() {
			doc.Resources = append(doc.Resources, mk(rc.Address, rc.Change))
		}
	}
	for name, oc := range js.OutputChanges {
		if oc != nil {
			doc.Outputs[name] = mk(name, oc)
		}
	}
	b, _ := json.Marshal(doc) // maps marshal with sorted keys: the same plan, the same bytes
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// maskSensitive returns v with every value that mask marks sensitive (true) replaced by
// an HMAC of it under key.
func maskSensitive(v, mask any, key []byte) any {
	switch m := mask.(type) {
	case bool:
		if !m {
			return v
		}
		b, _ := json.Marshal(v)
		h := hmac.New(sha256.New, key)
		h.Write(b)
		return "(sensitive " + hex.EncodeToString(h.Sum(nil))[:16] + ")"
	case map[string]any:
		obj, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := make(map[string]any, len(obj))
		for k, x := range obj {
			out[k] = maskSensitive(x, m[k], key)
		}
		return out
	case []any:
		list, ok := v.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(list))
		for i, x := range list {
			var sub any
			if i < len(m) {
				sub = m[i]
			}
			out[i] = maskSensitive(x, sub, key)
		}
		return out
	}
	return v
}

// ChangesID identifies an apply made without a saved plan (a create) by its changes.
func ChangesID(changes []Change) string {
	b, _ := json.Marshal(changes)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// spreadSensitivity marks as sensitive, in every change's masks, each text value that is
// sensitive anywhere in the plan: terraform does not always carry sensitivity over to a
// value derived from a sensitive one (terraform_data's output of a sensitive input keeps
// the old value unmarked). Texts shorter than four characters are left alone.
func spreadSensitivity(js *tfjson.Plan) {
	secret := map[string]bool{}
	changes := make([]*tfjson.Change, 0, len(js.ResourceChanges)+len(js.OutputChanges))
	for _, rc := range js.ResourceChanges {
		if rc.Change != nil {
			changes = append(changes, rc.Change)
		}
	}
	for _, oc := range js.OutputChanges {
		if oc != nil {
			changes = append(changes, oc)
		}
	}
	for _, c := range changes {
		plandoc.CollectSecrets(c.Before, c.BeforeSensitive, false, secret)
		plandoc.CollectSecrets(c.After, c.AfterSensitive, false, secret)
	}
	if len(secret) == 0 {
		return
	}
	for _, c := range changes {
		c.BeforeSensitive = markSecrets(c.Before, c.BeforeSensitive, secret)
		c.AfterSensitive = markSecrets(c.After, c.AfterSensitive, secret)
	}
}

// markSecrets returns mask with every text leaf of v that is a known secret marked.
func markSecrets(v, mask any, secret map[string]bool) any {
	if mask == true {
		return true
	}
	switch x := v.(type) {
	case string:
		if secret[x] {
			return true
		}
	case map[string]any:
		m, _ := mask.(map[string]any)
		out := make(map[string]any, len(x))
		for k, sub := range x {
			if sm := markSecrets(sub, m[k], secret); sm != nil && sm != false {
				out[k] = sm
			}
		}
		return out
	case []any:
		m, _ := mask.([]any)
		out := make([]any, len(x))
		for i, sub := range x {
			var sm any
			if i < len(m) {
				sm = m[i]
			}
			if out[i] = markSecrets(sub, sm, secret); out[i] == nil {
				out[i] = false
			}
		}
		return out
	}
	return mask
}
