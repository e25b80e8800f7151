package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// printEvents writes the events Terraplane's controllers send, one line each, as they
// happen: what `terraplane dev` shows a person instead of log lines.
func printEvents(ctx context.Context, c cache.Cache, out io.Writer) error {
	informer, err := c.GetInformer(ctx, &eventsv1.Event{})
	if err != nil {
		return fmt.Errorf("watch events: %w", err)
	}
	started := time.Now()
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if ev, ok := obj.(*eventsv1.Event); ok && strings.HasPrefix(ev.ReportingController, "terraplane") && ev.CreationTimestamp.After(started) {
				fmt.Fprintln(out, eventLine(ev))
			}
		},
	})
	return err
}

// eventLine is an event as a person reads it: time, object, reason, note.
func eventLine(ev *eventsv1.Event) string {
	mark := " "
	if ev.Type == "Warning" {
		mark = "!"
	}
	obj := ev.Regarding
	return fmt.Sprintf("%s %s %s %s/%s: %s: %s", ev.CreationTimestamp.Local().Format("15:04:05"), mark, obj.Kind, obj.Namespace, obj.Name,
		ev.Reason, strings.ReplaceAll(ev.Note, "\n", "; "))
}
