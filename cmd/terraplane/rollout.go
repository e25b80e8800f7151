package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/kref"
	"terraplane.io/terraplane/internal/revision"
)

func rolloutCommand() *cobra.Command {
	cmd := group(&cobra.Command{
		Use:   "rollout",
		Short: "Follow, pause, resume or undo the rollout of a class's revision",
		Long: `A class's new revision (a change of its module, its template or its provider lock) reaches
the resources that follow new revisions (revisionPolicy Automatic) in waves: a canary, then
batches of maxUnavailable (specTemplate.rollout), each once the one before runs it Ready
and Synced. A rollout pauses on the first failure or refused plan. CLASS is a non-portable
class of a Terraform kind (moduleclass/NAME, s3bucketclass/NAME, ...), looked for in the
admin namespace unless -n names another.`,
		Example: `  terraplane rollout status moduleclass/pets
  terraplane rollout undo moduleclass/pets`,
	})
	cmd.AddCommand(rolloutStatusCommand(), rolloutPauseCommand(true), rolloutPauseCommand(false), rolloutUndoCommand())
	return cmd
}

// rolloutFlags are the flags every rollout command takes.
type rolloutFlags struct {
	ns   nsFlags
	kube kubeFlags
}

func (f *rolloutFlags) bind(cmd *cobra.Command) {
	f.ns.bind(cmd.Flags())
	f.kube.bind(cmd.Flags())
}

// getClass connects and reads the class args name.
func (f *rolloutFlags) getClass(ctx context.Context, cmd *cobra.Command, args []string) (*session, revision.Class, error) {
	s, err := f.kube.connect(&f.ns, cmd.ErrOrStderr())
	if err != nil {
		return nil, nil, err
	}
	t, err := s.resolve(args)
	if err != nil {
		return nil, nil, err
	}
	mk, ok := s.reg.ManagedForClass(t.gvk)
	if !ok || mk.Terraform == nil {
		return nil, nil, kref.Usagef("%s is not a class of a kind that Terraform runs (ModuleClass, S3BucketClass, ...)", t.gvk.GroupKind())
	}
	obj := mk.NewClass()
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: t.namespace, Name: t.name}, obj); err != nil {
		return nil, nil, fmt.Errorf("get %s in namespace %s: %w", t, t.namespace, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(t.gvk)
	class, ok := obj.(revision.Class)
	if !ok {
		return nil, nil, fmt.Errorf("%s keeps no revisions", t)
	}
	return s, class, nil
}

func rolloutStatusCommand() *cobra.Command {
	var f rolloutFlags
	var watch bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status CLASS",
		Short: "Show where the rollout of a class's revision stands",
		Long: `Show the revision rolling out, its wave, how many resources run it, why it is paused if it
is, and every revision the class keeps with the resources on it. With --watch, wait until
the rollout completes (exit 0) or pauses (exit 1).`,
		Example: `  terraplane rollout status moduleclass/pets
  terraplane rollout status s3bucketclass/standard --watch --timeout 30m
  terraplane rollout status moduleclass/pets -o json`,
		Args: refArgs,
	}
	out := bindOutput(cmd, "", "json", "yaml")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "wait until the rollout completes (exit 0) or pauses (exit 1)")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Minute, "how long --watch waits")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := ctrl.SetupSignalHandler()
		s, class, err := f.getClass(ctx, cmd, args)
		if err != nil {
			return err
		}
		if out.data() {
			return out.print(cmd.OutOrStdout(), reportOf(class))
		}
		printRollout(cmd.OutOrStdout(), class)
		if !watch {
			return nil
		}
		return watchRollout(ctx, cmd.OutOrStdout(), s.client, class, timeout)
	}
	f.bind(cmd)
	return cmd
}

// rolloutReport is what rollout status -o json prints: the class and its revisions.
type rolloutReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	common.ClassRevisions
}

func reportOf(class revision.Class) rolloutReport {
	gvk := class.GetObjectKind().GroupVersionKind()
	return rolloutReport{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: class.GetNamespace(), Name: class.GetName(),
		ClassRevisions: *class.GetClassRevisions()}
}

// rolloutChange is what rollout pause, resume and undo print with -o json.
type rolloutChange struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	// Action is what was asked: pause, resume or undo.
	Action string `json:"action"`
	// From and To are the revisions an undo rolls the resources back from and to.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// done prints what a rollout command did: text for people, or the change as data.
func done(cmd *cobra.Command, out *output, class revision.Class, change rolloutChange, text string) error {
	if !out.data() {
		_, err := fmt.Fprintln(cmd.OutOrStdout(), text)
		return err
	}
	gvk := class.GetObjectKind().GroupVersionKind()
	change.APIVersion, change.Kind, change.Namespace, change.Name = gvk.GroupVersion().String(), gvk.Kind, class.GetNamespace(), class.GetName()
	return out.print(cmd.OutOrStdout(), change)
}

// watchRollout polls class until the rollout of the revision it names now completes or
// pauses.
func watchRollout(ctx context.Context, w io.Writer, c client.Client, class revision.Class, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := ""
	for {
		finished, line, err := rolloutProgress(class)
		if finished || err != nil {
			if line != "" {
				fmt.Fprintln(w, line)
			}
			return err
		}
		if line != last {
			fmt.Fprintln(w, line)
			last = line
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the rollout did not complete within %s", timeout)
		case <-time.After(2 * time.Second):
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(class), class); err != nil {
			return fmt.Errorf("get class: %w", err)
		}
	}
}

// rolloutProgress says how far the rollout of the revision class names now has come:
// finished with no error once it completes, with one once it pauses, and otherwise a line
// of progress. A rollout of another revision (the one before an edit the revision
// controller has not seen yet) is not the one watched.
func rolloutProgress(class revision.Class) (bool, string, error) {
	ro := class.GetClassRevisions().Rollout
	paused := meta.FindStatusCondition(*class.GetClassConditions(), common.TypeRolloutPaused)
	switch target := watchedRevision(class); {
	case paused == nil || paused.ObservedGeneration < class.GetGeneration() || ro == nil || target == "":
		return false, fmt.Sprintf("waiting for the revision of generation %d of the class", class.GetGeneration()), nil
	case ro.Revision != target:
		return false, fmt.Sprintf("waiting for the rollout of %s to start", target), nil
	case ro.Paused != "":
		return true, "", fmt.Errorf("the rollout of %s is paused: %s: %s", ro.Revision, ro.Paused, ro.Message)
	case ro.CompletedAt != nil:
		return true, fmt.Sprintf("revision %s runs on all %d resources that follow new revisions", ro.Revision, ro.Total), nil
	}
	return false, fmt.Sprintf("wave %d: %d of %d resources run %s", ro.Wave, ro.Updated, ro.Total, ro.Revision), nil
}

// watchedRevision is the revision a rollout of class goes to: its latest, or, while the
// latest is the one an undo rolled back from, the one it rolled back to.
func watchedRevision(class revision.Class) string {
	latest := class.GetClassRevisions().LatestRevision
	if a := class.GetAnnotations(); a[common.RolloutUndoFromAnnotation] != "" && a[common.RolloutUndoFromAnnotation] == latest {
		return a[common.RolloutUndoToAnnotation]
	}
	return latest
}

// printRollout writes the rollout and the revisions of class for people.
func printRollout(w io.Writer, class revision.Class) {
	rc := class.GetClassRevisions()
	kind := class.GetObjectKind().GroupVersionKind().Kind
	fmt.Fprintf(w, "%s %s/%s: latest revision %s\n", kind, class.GetNamespace(), class.GetName(), orNone(rc.LatestRevision))
	if ro := rc.Rollout; ro != nil {
		state := "rolling out"
		switch {
		case ro.Paused != "":
			state = "paused (" + ro.Paused + "): " + ro.Message
		case ro.CompletedAt != nil:
			state = "complete at " + ro.CompletedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "rollout of %s, started %s: wave %d, %d of %d resources run it; %s\n",
			ro.Revision, ro.StartedAt.UTC().Format(time.RFC3339), ro.Wave, ro.Updated, ro.Total, state)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tNUMBER\tRESOURCES\tREADY\tPENDING\tCREATED")
	for _, r := range rc.Revisions {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\n", r.Name, r.Revision, r.Resources, r.Ready, r.Pending, r.CreatedAt.UTC().Format(time.RFC3339))
	}
	_ = tw.Flush()
	if len(rc.Providers) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tVERSION\tRESOURCES")
	for _, p := range rc.Providers {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", p.Provider, p.Version, p.Resources)
	}
	_ = tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "(none yet)"
	}
	return s
}

// rolloutPauseCommand is rollout pause (pause true) or rollout resume.
func rolloutPauseCommand(pause bool) *cobra.Command {
	var f rolloutFlags
	cmd := &cobra.Command{
		Use:   "pause CLASS",
		Short: "Stop moving resources to the revision rolling out (specTemplate.rollout.paused)",
		Long: `Stop moving resources to the revision rolling out: sets specTemplate.rollout.paused. Resources
already moving carry on; the others stay where they are until terraplane rollout resume.`,
		Example: "  terraplane rollout pause moduleclass/pets",
		Args:    refArgs,
	}
	out := bindOutput(cmd, "", "json", "yaml")
	if !pause {
		cmd.Use, cmd.Short, cmd.Example = "resume CLASS", "Go on with a rollout paused on request or by a failure", "  terraplane rollout resume moduleclass/pets"
		cmd.Long = `Go on with a rollout: clears specTemplate.rollout.paused, and goes on after a failure paused
it (annotation terraplane.io/rollout-resumed-at); the resources failing then no longer
pause it or hold its batches back.`
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := ctrl.SetupSignalHandler()
		s, class, err := f.getClass(ctx, cmd, args)
		if err != nil {
			return err
		}
		patch := map[string]any{"specTemplate": map[string]any{"rollout": map[string]any{"paused": pause}}}
		if !pause {
			patch["metadata"] = map[string]any{"annotations": map[string]any{common.RolloutResumedAtAnnotation: time.Now().UTC().Format(time.RFC3339Nano)}}
		}
		gvk := class.GetObjectKind().GroupVersionKind()
		if err := mergePatch(ctx, s.client, class, patch); err != nil {
			return err
		}
		action, verb := "resume", "resumed"
		if pause {
			action, verb = "pause", "paused"
		}
		// the class's GVK, which the patch's answer leaves out
		class.GetObjectKind().SetGroupVersionKind(gvk)
		return done(cmd, out, class, rolloutChange{Action: action}, fmt.Sprintf("the rollout of %s/%s is %s", class.GetNamespace(), class.GetName(), verb))
	}
	f.bind(cmd)
	return cmd
}

func rolloutUndoCommand() *cobra.Command {
	var f rolloutFlags
	var to string
	cmd := &cobra.Command{
		Use:   "undo CLASS",
		Short: "Roll a class's resources back to the revision before the one rolling out",
		Long: `Roll the resources that follow new revisions back from the revision rolling out to the one
before it (or --to-revision, a name or a number of status.revisions): a new rollout, in
waves, whose plans are like any other (approval and the destructive-change guardrail
apply). The class stays on that revision while the undone one is its latest; a later
change of the class makes a new revision, which rolls out as usual.`,
		Example: `  terraplane rollout undo moduleclass/pets
  terraplane rollout undo moduleclass/pets --to-revision 3`,
		Args: refArgs,
	}
	out := bindOutput(cmd, "", "json", "yaml")
	cmd.Flags().StringVar(&to, "to-revision", "", "the revision to go back to: its name or number (default: the one before the revision rolling out)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := ctrl.SetupSignalHandler()
		s, class, err := f.getClass(ctx, cmd, args)
		if err != nil {
			return err
		}
		target, err := undoTarget(class.GetClassRevisions(), to)
		if err != nil {
			return err
		}
		from, gvk := class.GetClassRevisions().LatestRevision, class.GetObjectKind().GroupVersionKind()
		patch := map[string]any{"metadata": map[string]any{"annotations": map[string]any{
			common.RolloutUndoFromAnnotation: from, common.RolloutUndoToAnnotation: target}}}
		if err := mergePatch(ctx, s.client, class, patch); err != nil {
			return err
		}
		class.GetObjectKind().SetGroupVersionKind(gvk)
		return done(cmd, out, class, rolloutChange{Action: "undo", From: from, To: target},
			fmt.Sprintf("rolling %s/%s back to revision %s", class.GetNamespace(), class.GetName(), target))
	}
	f.bind(cmd)
	return cmd
}

// undoTarget is the revision an undo goes back to: to (a name or number), or the newest
// revision older than the one rolling out.
func undoTarget(rc *common.ClassRevisions, to string) (string, error) {
	current := rc.LatestRevision
	if rc.Rollout != nil && rc.Rollout.Revision != "" {
		current = rc.Rollout.Revision
	}
	var from int64
	for _, r := range rc.Revisions {
		if r.Name == current {
			from = r.Revision
		}
	}
	best := ""
	var bestN int64
	for _, r := range rc.Revisions {
		switch {
		case to != "" && (r.Name == to || strconv.FormatInt(r.Revision, 10) == to):
			return r.Name, nil
		case to == "" && r.Revision < from && r.Revision > bestN:
			best, bestN = r.Name, r.Revision
		}
	}
	switch {
	case to != "":
		return "", kref.Usagef("the class keeps no revision %q (see terraplane rollout status)", to)
	case best == "":
		return "", fmt.Errorf("the class keeps no revision older than %s to go back to", orNone(current))
	}
	return best, nil
}

// mergePatch applies patch to obj as a JSON merge patch.
func mergePatch(ctx context.Context, c client.Client, obj client.Object, patch map[string]any) error {
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, b)); err != nil {
		return fmt.Errorf("patch %s: %w", obj.GetName(), err)
	}
	return nil
}
