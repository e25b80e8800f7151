package devenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompactRecording(t *testing.T) {
	const (
		create    = `{"method": "PUT", "url": "http://127.0.0.1:9900/quickstart-1", "body": "", "body_encoded": false}`
		tag       = `{"method": "PUT", "url": "http://127.0.0.1:9900/quickstart-1?tagging", "body": "PFRhZ2dpbmc+", "body_encoded": true}`
		remove    = `{"method": "DELETE", "url": "http://127.0.0.1:9900/quickstart-1"}`
		deleteObj = `{"method": "POST", "url": "http://127.0.0.1:9900/quickstart-1?delete"}`
		list      = `{"method": "GET", "url": "http://127.0.0.1:9900/"}`
		head      = `{"method": "HEAD", "url": "http://127.0.0.1:9900/quickstart-1"}`
		lower     = `{"method": "get", "url": "http://127.0.0.1:9900/quickstart-1?versioning"}`
		motoAPI   = `{"method": "POST", "url": "http://127.0.0.1:9900/moto-api/reset"}`
	)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"changes are kept in order", create + "\n" + tag + "\n" + remove + "\n" + deleteObj + "\n", create + "\n" + tag + "\n" + remove + "\n" + deleteObj + "\n"},
		{"reads are dropped", list + "\n" + create + "\n" + head + "\n" + lower + "\n", create + "\n"},
		{"moto's own API is dropped", motoAPI + "\n" + tag + "\n", tag + "\n"},
		{"a write cut short is dropped", create + "\n" + `{"method": "PUT", "url": "http://127.0.0.1:99`, create + "\n"},
		{"a last line without newline is kept", create, create + "\n"},
		{"blank lines and non-requests are dropped", "\n{}\n[1]\n" + remove + "\n\n", remove + "\n"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, string(compactRecording([]byte(tc.in)))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompactRecordingFile checks what is left to replay: nothing for a missing file or
// one of reads only (rewritten empty), the changes otherwise (rewritten to them).
func TestCompactRecordingFile(t *testing.T) {
	const put = `{"method": "PUT", "url": "http://127.0.0.1:9900/b"}` + "\n"
	const get = `{"method": "GET", "url": "http://127.0.0.1:9900/b"}` + "\n"
	type result struct {
		Replay bool
		File   string
	}
	for _, tc := range []struct {
		name string
		in   *string
		want result
	}{
		{"missing", nil, result{File: "<none>"}},
		{"reads only", ptr(get + get), result{File: ""}},
		{"changes", ptr(get + put + get), result{Replay: true, File: put}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), motoRecording)
			if tc.in != nil {
				if err := os.WriteFile(path, []byte(*tc.in), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			replay, err := compactRecordingFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := result{Replay: replay, File: "<none>"}
			if raw, err := os.ReadFile(path); err == nil {
				got.File = string(raw)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func ptr(s string) *string { return &s }
