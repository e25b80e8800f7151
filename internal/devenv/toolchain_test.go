package devenv

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCacheDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	cases := map[string]struct {
		env  string
		want string
	}{
		"TERRAPLANE_CACHE": {env: "/opt/tp-cache", want: "/opt/tp-cache"},
		"the home's cache": {want: filepath.Join(home, ".cache", "terraplane")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("TERRAPLANE_CACHE", tc.env)
			got := []string{CacheDir(), BinDir(), PluginMirror()}
			want := []string{tc.want, filepath.Join(tc.want, "bin"), filepath.Join(tc.want, "providers")}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestTool: a tool is taken from the cache, else from PATH, else its absence names the
// make target that installs it (make tools-test for what only the tests need).
func TestTool(t *testing.T) {
	cache, path := t.TempDir(), t.TempDir()
	t.Setenv("TERRAPLANE_CACHE", cache)
	t.Setenv("PATH", path)
	write := func(dir, name string) string {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cached := write(filepath.Join(cache, "bin"), "etcd")
	write(path, "etcd")
	onPath := write(path, "kubectl")
	cases := map[string]struct {
		tool, want, err string
	}{
		"in the cache, before PATH": {tool: "etcd", want: cached},
		"on PATH":                   {tool: "kubectl", want: onPath},
		"nowhere, make run's":       {tool: "kube-apiserver", err: "kube-apiserver is not installed in " + filepath.Join(cache, "bin") + ": run `make tools`"},
		"nowhere, the tests'":       {tool: "minio", err: "minio is not installed in " + filepath.Join(cache, "bin") + ": run `make tools-test`"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Tool(tc.tool)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff([]string{tc.want, tc.err}, []string{got, gotErr}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFreePort(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("port %d is not free: %v", port, err)
	}
	_ = l.Close()
}

// TestWaitHTTP: waiting ends at the first 200, at the deadline, or when ctx ends.
func TestWaitHTTP(t *testing.T) {
	server := func(okAfter int32) string {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if calls.Add(1) <= okAfter {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := map[string]struct {
		ctx     context.Context
		url     string
		timeout time.Duration
		err     string
	}{
		"ready at once":         {ctx: context.Background(), url: server(0), timeout: time.Second},
		"ready after two tries": {ctx: context.Background(), url: server(2), timeout: 5 * time.Second},
		"never ready":           {ctx: context.Background(), url: server(1000), timeout: 300 * time.Millisecond, err: "status 503"},
		"nobody there":          {ctx: context.Background(), url: closed.URL, timeout: 300 * time.Millisecond, err: "connection refused"},
		"given up":              {ctx: cancelled, url: server(1000), timeout: time.Minute, err: "context canceled"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := waitHTTP(tc.ctx, tc.url, tc.timeout)
			if (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("waitHTTP = %v, want %q", err, tc.err)
			}
		})
	}
}
