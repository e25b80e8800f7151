package resource

import (
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Recorder sends events through the events.k8s.io API. Each event's action is its
// reason: what the controller did is what the reason names.
type Recorder struct {
	events recorder.EventRecorder
}

// NewRecorder returns a Recorder reporting as component name.
func NewRecorder(p recorder.Provider, name string) Recorder {
	return Recorder{events: p.GetEventRecorder(name)}
}

// Eventf records an event of type eventType ("Normal" or "Warning") about obj.
func (r Recorder) Eventf(obj runtime.Object, eventType, reason, format string, args ...any) {
	if r.events == nil {
		return // the zero Recorder sends nothing
	}
	r.events.Eventf(obj, nil, eventType, reason, reason, format, args...)
}

// Event records an event with a fixed message about obj.
func (r Recorder) Event(obj runtime.Object, eventType, reason, message string) {
	if r.events == nil {
		return
	}
	r.events.Eventf(obj, nil, eventType, reason, reason, "%s", message)
}

// RecorderFor wraps an event recorder (a fake one in unit tests).
func RecorderFor(events recorder.EventRecorder) Recorder { return Recorder{events: events} }
