package engine

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"terraplane.io/terraplane/internal/plugins"
)

// TestCreateNotCheckableIsRefusedFirst: a create with a check that cannot be checked
// inside its apply (no checker, or providers not the pool's) is refused before
// terraform starts, so that it is planned first.
func TestCreateNotCheckableIsRefusedFirst(t *testing.T) {
	ws := Workspace{ID: "w", Check: []byte(`{}`)}
	e := &Engine{}
	_, err := e.create(context.Background(), ws)
	var refused *CreateRefusedError
	if !errors.As(err, &refused) {
		t.Errorf("no checker: %v", err)
	}
	e = &Engine{lent: map[string]*plugins.Lease{"w": {}}}
	e.opts.CheckCreate = func(context.Context, json.RawMessage, []plugins.PlannedCreate, []string) (json.RawMessage, bool, error) {
		return nil, true, nil
	}
	if _, err := e.holdCreate(context.Background(), ws); !errors.As(err, &refused) {
		t.Errorf("providers not the pool's: %v", err)
	}
}
