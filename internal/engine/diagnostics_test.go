package engine

import (
	"errors"
	"strings"
	"testing"
)

// lockBanner is what terraform prints on stderr when the state lock is held.
const lockBanner = `
Error: Error acquiring the state lock

Error message: the state is already locked by another terraform client
Lock Info:
  ID:        6f1f3a6e-6d2f-4f0c-9e0e-1c1b2a3d4e5f
  Path:      
  Operation: OperationTypeApply
  Who:       terraplane@controller-0
  Version:   1.11.4
  Created:   2026-11-24 13:00:00.000000 +0000 UTC
  Info:      


Terraform acquires a state lock to protect the state from being written
by multiple users at the same time. Please resolve the issue above and try
again. For most commands, you can disable locking with the "-lock=false"
flag, but this is not recommended.
`

func TestSummaryOneLine(t *testing.T) {
	framed := "exit status 1\n\n╷\n│ Error: Invalid value for variable\n│ \n│   on variables.tf line 3:\n│ \n│ bucket_name must be lower case\n╵\n"
	json := parseApplyStream([]byte(`{"type":"diagnostic","diagnostic":{"severity":"error","summary":"Error acquiring the state lock","detail":"Error message: the state is already locked by another terraform client\nLock Info:\n  ID: abc"}}`)).
		withDiagnostics(errors.New("exit status 1"))
	for name, c := range map[string]struct {
		err  error
		want string
	}{
		"banner": {errors.New(lockBanner), "Error acquiring the state lock: Error message: the state is already locked by another terraform client"},
		"framed": {errors.New(framed), "Invalid value for variable: on variables.tf line 3:"},
		"json":   {json, "Error acquiring the state lock: Error message: the state is already locked by another terraform client"},
		"plain":  {errors.New("read state lock x: forbidden\nmore"), "read state lock x: forbidden"},
	} {
		got := Summary(c.err)
		if got != c.want {
			t.Errorf("%s: Summary = %q, want %q", name, got, c.want)
		}
		if strings.Contains(got, "\n") {
			t.Errorf("%s: summary has a line break", name)
		}
	}
	if long := Summary(errors.New(strings.Repeat("x", 1000))); len(long) != maxSummary {
		t.Errorf("long summary is %d bytes, want %d", len(long), maxSummary)
	}
}
