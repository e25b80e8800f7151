package backendproxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// secretStore is an upstream that keeps one Secret, ns/tfstate-default-abc, and counts
// the requests it gets by method and path.
type secretStore struct {
	mu       sync.Mutex
	version  int
	data     string
	requests []string
	conflict bool // the next PUT is refused
}

func (s *secretStore) secret() string {
	return fmt.Sprintf(`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"tfstate-default-abc","namespace":"ns","resourceVersion":"%d","labels":{"tfstate":"true","tfstateSecretSuffix":"abc","tfstateWorkspace":"default"}},"data":{"tfstate":%q}}`, s.version, s.data)
}

func (s *secretStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/secrets"):
		item := s.secret()
		item = `{` + item[strings.Index(item, `"metadata"`):]
		_, _ = fmt.Fprintf(w, `{"kind":"SecretList","apiVersion":"v1","metadata":{"resourceVersion":"%d"},"items":[%s]}`, s.version, item)
	case r.Method == http.MethodGet:
		_, _ = io.WriteString(w, s.secret())
	case r.Method == http.MethodPut && s.conflict:
		s.conflict = false
		w.WriteHeader(http.StatusConflict)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409}`)
	case r.Method == http.MethodPut:
		var in struct {
			Data map[string]string `json:"data"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		s.version++
		s.data = in.Data["tfstate"]
		_, _ = io.WriteString(w, s.secret())
	default:
		s.version++
		_, _ = io.WriteString(w, s.secret())
	}
}

// forwarded is how many requests reached the store, and forgets them.
func (s *secretStore) forwarded() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.requests)
	s.requests = nil
	return n
}

// TestHold: while a state is held, terraform's rereads of it (the LIST narrowed to its
// name, the GET by name) are answered from the first read and from the proxy's own
// writes, and match what the API server would say; a write by any other way, a refused
// write, a read asking for more than the Secret, and the end of the hold send reads
// to the API server again.
func TestHold(t *testing.T) {
	store := &secretStore{version: 1, data: "c2VlZA=="}
	upstream := httptest.NewServer(store)
	defer upstream.Close()
	p, err := Start(&rest.Config{Host: upstream.URL}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const name = "/api/v1/namespaces/ns/secrets/tfstate-default-abc"
	list := "/api/v1/namespaces/ns/secrets?labelSelector=" + url.QueryEscape("tfstate=true,tfstateSecretSuffix=abc,tfstateWorkspace=default")
	do := func(method, path, body, accept string) (int, string) {
		t.Helper()
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+p.token)
		r.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	// data is the state a reply carries: the Secret's, or a list's one item's ("none").
	data := func(t *testing.T, reply string) string {
		t.Helper()
		var obj struct {
			Kind  string `json:"kind"`
			Items []struct {
				Kind string            `json:"kind"`
				Data map[string]string `json:"data"`
			} `json:"items"`
			Data map[string]string `json:"data"`
		}
		if err := json.Unmarshal([]byte(reply), &obj); err != nil {
			t.Fatalf("reply %q: %v", reply, err)
		}
		if obj.Kind == "SecretList" {
			if len(obj.Items) == 0 {
				return "none"
			}
			return obj.Items[0].Data["tfstate"]
		}
		return obj.Data["tfstate"]
	}
	const jsonOnly = "application/json"
	put := func(state string) int {
		code, _ := do(http.MethodPut, name, fmt.Sprintf(`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"tfstate-default-abc"},"data":{"tfstate":%q}}`, state), jsonOnly)
		return code
	}

	t.Run("not held", func(t *testing.T) {
		do(http.MethodGet, list, "", jsonOnly)
		do(http.MethodGet, name, "", jsonOnly)
		if n := store.forwarded(); n != 2 {
			t.Errorf("%d reads reached the API server, want 2", n)
		}
	})

	type step struct {
		what                 string
		method, path, accept string
		state                string // for a PUT
		wantForwarded        int
		wantData             string // "" for not checked
	}
	cases := []struct {
		name  string
		setup func()
		steps []step
	}{
		{name: "terraform's apply", steps: []step{
			{what: "the first read", method: http.MethodGet, path: list, wantForwarded: 1, wantData: "c2VlZA=="},
			{what: "a reread by labels", method: http.MethodGet, path: list, wantData: "c2VlZA=="},
			{what: "a read by name", method: http.MethodGet, path: name, wantData: "c2VlZA=="},
			{what: "the write", method: http.MethodPut, path: name, state: "bmV3", wantForwarded: 1},
			{what: "a read after the write", method: http.MethodGet, path: name, wantData: "bmV3"},
			{what: "a list after the write", method: http.MethodGet, path: list, wantData: "bmV3"},
		}},
		{name: "labels the Secret has not", steps: []step{
			{what: "the first read", method: http.MethodGet, path: name, wantForwarded: 1},
			{what: "another workspace's labels", method: http.MethodGet, path: "/api/v1/namespaces/ns/secrets?labelSelector=" + url.QueryEscape("tfstateSecretSuffix=abc,tfstateWorkspace=other") + "&fieldSelector=" + url.QueryEscape("metadata.name=tfstate-default-abc"), wantData: "none"},
		}},
		{name: "a refused write", setup: func() { store.conflict = true }, steps: []step{
			{what: "the first read", method: http.MethodGet, path: name, wantForwarded: 1},
			{what: "the refused write", method: http.MethodPut, path: name, state: "bG9zdA==", wantForwarded: 1},
			{what: "a read after it", method: http.MethodGet, path: name, wantForwarded: 1},
			{what: "a read after that", method: http.MethodGet, path: name},
		}},
		{name: "writes by other ways", steps: []step{
			{what: "the first read", method: http.MethodGet, path: name, wantForwarded: 1},
			{what: "a patch", method: http.MethodPatch, path: name, wantForwarded: 1},
			{what: "a read after the patch", method: http.MethodGet, path: name, wantForwarded: 1},
			{what: "a create in the namespace", method: http.MethodPost, path: "/api/v1/namespaces/ns/secrets", wantForwarded: 1},
			{what: "a read after the create", method: http.MethodGet, path: list, wantForwarded: 1},
			{what: "a create in another namespace", method: http.MethodPost, path: "/api/v1/namespaces/other/secrets", wantForwarded: 1},
			{what: "a read after that", method: http.MethodGet, path: list},
		}},
		{name: "reads that ask for more", steps: []step{
			{what: "the first read", method: http.MethodGet, path: name, wantForwarded: 1},
			{what: "a read at a version", method: http.MethodGet, path: name + "?resourceVersion=0", wantForwarded: 1},
			{what: "a watch", method: http.MethodGet, path: list + "&watch=true", wantForwarded: 1},
			{what: "a read in protobuf", method: http.MethodGet, path: name, accept: "application/vnd.kubernetes.protobuf", wantForwarded: 1},
			{what: "another Secret", method: http.MethodGet, path: "/api/v1/namespaces/ns/secrets/other", wantForwarded: 1},
			{what: "the same Secret in another namespace", method: http.MethodGet, path: "/api/v1/namespaces/other/secrets/tfstate-default-abc", wantForwarded: 1},
			{what: "a plain read", method: http.MethodGet, path: name},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup()
			}
			release := p.Hold("ns", "tfstate-default-abc", nil)
			for _, s := range tc.steps {
				accept := s.accept
				if accept == "" {
					accept = jsonOnly
				}
				code, reply := 0, ""
				if s.method == http.MethodPut {
					code = put(s.state)
				} else {
					code, reply = do(s.method, s.path, "{}", accept)
				}
				if n := store.forwarded(); n != s.wantForwarded {
					t.Errorf("%s: %d requests reached the API server, want %d", s.what, n, s.wantForwarded)
				}
				if s.wantData == "" {
					continue
				}
				if code != http.StatusOK {
					t.Fatalf("%s: status %d", s.what, code)
				}
				if got := data(t, reply); got != s.wantData {
					t.Errorf("%s: state %q, want %q", s.what, got, s.wantData)
				}
			}
			release()
			release() // a second release changes nothing
			do(http.MethodGet, name, "", jsonOnly)
			if n := store.forwarded(); n != 1 {
				t.Errorf("a read after the hold: %d requests reached the API server, want 1", n)
			}
		})
	}

	t.Run("a state its lock wrote", func(t *testing.T) {
		store.mu.Lock()
		known := store.secret()
		store.mu.Unlock()
		want := data(t, known)
		release := p.Hold("ns", "tfstate-default-abc", []byte(known))
		defer release()
		for _, path := range []string{list, name} {
			code, reply := do(http.MethodGet, path, "", jsonOnly)
			if code != http.StatusOK || data(t, reply) != want {
				t.Errorf("%s: status %d, %s", path, code, reply)
			}
		}
		if n := store.forwarded(); n != 0 {
			t.Errorf("%d reads reached the API server, want none", n)
		}
		defer p.Hold("ns", "tfstate-default-abc", []byte(`{"kind":"Secret","data":{"tfstate":"b2xk"}}`))()
		if _, reply := do(http.MethodGet, name, "", jsonOnly); data(t, reply) != want {
			t.Errorf("a second holder's older Secret took the place of the one kept: %s", reply)
		}
	})

	t.Run("two holders", func(t *testing.T) {
		first, second := p.Hold("ns", "tfstate-default-abc", nil), p.Hold("ns", "tfstate-default-abc", nil)
		do(http.MethodGet, name, "", jsonOnly)
		first()
		do(http.MethodGet, name, "", jsonOnly)
		if n := store.forwarded(); n != 1 {
			t.Errorf("%d reads reached the API server while one holder was left, want 1", n)
		}
		second()
		do(http.MethodGet, name, "", jsonOnly)
		if n := store.forwarded(); n != 1 {
			t.Errorf("%d reads reached the API server after both released, want 1", n)
		}
	})
}
