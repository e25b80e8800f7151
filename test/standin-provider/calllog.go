package main

import (
	"encoding/json"
	"os"
	"sync"
	"time"
)

// Call is one line of the call log: what terraform asked the stand-in.
type Call struct {
	Time     time.Time `json:"time"`
	Provider string    `json:"provider"`
	Call     string    `json:"call"`
	Type     string    `json:"type,omitempty"`
	// Action is create, update, replace, delete or no-op (plans and applies).
	Action string `json:"action,omitempty"`
	// Values are the configuration, planned or read values, sensitive ones left out.
	Values any `json:"values,omitempty"`
	// Replace are the arguments whose change the plan replaces the resource for.
	Replace []string `json:"replace,omitempty"`
	ID      string   `json:"id,omitempty"`
}

// callLog appends calls, one JSON line each, to a file (none: no log).
type callLog struct {
	mu       sync.Mutex
	path     string
	provider string
}

func (l *callLog) record(c Call) {
	if l.path == "" {
		return
	}
	c.Time, c.Provider = time.Now().UTC(), l.provider
	b, err := json.Marshal(c)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.OpenFile(l.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}
