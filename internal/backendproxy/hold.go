package backendproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// secretPath is the path of one Secret: its namespace and name.
var secretPath = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/secrets/([^/]+)$`)

// listPath is the path of a LIST (or watch) of a namespace's Secrets, with the namespace.
var listPath = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/secrets/?$`)

// holds are the state Secrets whose reads the proxy answers itself, by namespace/name.
type holds struct {
	mu    sync.Mutex
	byKey map[string]*held
}

// held is one held state Secret.
type held struct {
	count  int    // holders
	gen    uint64 // writes seen, so that a read answered before one is not kept after it
	secret []byte // the Secret as the API server last returned it, as JSON; nil when unknown
}

// Hold answers the reads of the state Secret namespace/name from what the proxy last read
// or wrote of it, until release: the first read goes to the API server, unless known
// (the Secret as the API server last returned it, as JSON) answers it, and the ones
// after it until a write are answered from its reply; a write goes to the API server
// and its reply is kept in turn. It is for a state whose lock this process holds, which
// nobody else writes meanwhile: terraform reads the state it is about to change three or
// four times in a run, and each read would otherwise wait in the API server's queue.
// release says what the proxy last knew of the Secret: nil when it knew nothing, or a
// write of it went astray.
func (p *Proxy) Hold(namespace, name string, known []byte) (release func() (last []byte)) {
	key := namespace + "/" + name
	p.holds.mu.Lock()
	defer p.holds.mu.Unlock()
	if p.holds.byKey == nil {
		p.holds.byKey = map[string]*held{}
	}
	h := p.holds.byKey[key]
	if h == nil {
		h = &held{}
		p.holds.byKey[key] = h
	}
	h.count++
	if h.secret == nil && known != nil {
		h.secret = known
	}
	var once sync.Once
	return func() (last []byte) {
		once.Do(func() {
			p.holds.mu.Lock()
			defer p.holds.mu.Unlock()
			last = h.secret
			if h.count--; h.count == 0 {
				delete(p.holds.byKey, key)
			}
		})
		return last
	}
}

// heldRequest is what a request does to a held Secret.
type heldRequest struct {
	key  string
	read bool // a read of the Secret by name (get) or of a list narrowed to it (list)
	list bool
	// selector is a list's label selector, which the held Secret must match.
	selector labels.Selector
}

// classify says which held Secret r reads or writes, if any; a create in a namespace
// with held Secrets writes all of them, as its name is in its body.
func (p *Proxy) classify(r *http.Request) (reqs []heldRequest) {
	if m := secretPath.FindStringSubmatch(r.URL.Path); m != nil {
		switch {
		case r.Method == http.MethodGet && plainQuery(r.URL.Query(), nil):
			return []heldRequest{{key: m[1] + "/" + m[2], read: true}}
		case r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions:
			return nil // a read the proxy does not answer, which changes nothing
		}
		return []heldRequest{{key: m[1] + "/" + m[2]}}
	}
	m := listPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		return nil
	}
	switch r.Method {
	case http.MethodGet:
		q := r.URL.Query()
		name, ok := narrowedTo(q)
		if !ok || !plainQuery(q, []string{"labelSelector", "fieldSelector", "limit"}) {
			return nil
		}
		sel, err := labels.Parse(q.Get("labelSelector"))
		if err != nil {
			return nil
		}
		return []heldRequest{{key: m[1] + "/" + name, read: true, list: true, selector: sel}}
	case http.MethodHead, http.MethodOptions:
		return nil
	}
	p.holds.mu.Lock()
	defer p.holds.mu.Unlock()
	for key := range p.holds.byKey {
		if strings.HasPrefix(key, m[1]+"/") {
			reqs = append(reqs, heldRequest{key: key})
		}
	}
	return reqs
}

// narrowedTo is the name a LIST's field selector selects, when it selects by that alone.
func narrowedTo(q url.Values) (string, bool) {
	sel, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil || sel.Empty() {
		return "", false
	}
	name, ok := sel.RequiresExactMatch("metadata.name")
	return name, ok && sel.String() == fields.OneTermEqualSelector("metadata.name", name).String()
}

// plainQuery says whether q holds no parameter but allowed: none that asks for a
// version, a watch or a form of reply the proxy does not keep.
func plainQuery(q url.Values, allowed []string) bool {
	for k := range q {
		if !slices.Contains(allowed, k) {
			return false
		}
	}
	return true
}

// acceptsJSON says whether r takes a JSON reply, as terraform's client asks.
func acceptsJSON(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	return accept == "" || strings.Contains(accept, "application/json") || strings.Contains(accept, "*/*")
}

// answer replies to r from a held Secret when r reads one the proxy knows, and otherwise
// marks what r does to held Secrets for the reply to update; it says whether it replied.
func (p *Proxy) answer(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	reqs := p.classify(r)
	if len(reqs) == 0 {
		return r, false
	}
	p.holds.mu.Lock()
	defer p.holds.mu.Unlock()
	var captures []capture
	for _, req := range reqs {
		h := p.holds.byKey[req.key]
		if h == nil {
			continue
		}
		if !req.read {
			h.gen++
			h.secret = nil
			if r.Method == http.MethodPut {
				captures = append(captures, capture{held: h, gen: h.gen})
			}
			continue
		}
		if !acceptsJSON(r) {
			continue
		}
		if h.secret != nil {
			reply(w, req, h.secret)
			return r, true
		}
		captures = append(captures, capture{held: h, gen: h.gen, list: req.list})
	}
	if len(captures) == 0 {
		return r, false
	}
	r = r.WithContext(context.WithValue(r.Context(), captureKey{}, captures))
	r.Header.Del("Accept-Encoding") // a reply to keep comes back as it is
	return r, false
}

// reply writes the held Secret secret as the reply to req: itself, or a list of it when
// it matches the list's labels, else an empty one.
func reply(w http.ResponseWriter, req heldRequest, secret []byte) {
	body := secret
	if req.list {
		var meta struct {
			Metadata struct {
				Labels          map[string]string `json:"labels"`
				ResourceVersion string            `json:"resourceVersion"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(secret, &meta) // kept only once it decoded
		items := []json.RawMessage{}
		if req.selector.Matches(labels.Set(meta.Metadata.Labels)) {
			items = append(items, secret)
		}
		body, _ = json.Marshal(map[string]any{
			"kind": "SecretList", "apiVersion": "v1",
			"metadata": map[string]string{"resourceVersion": meta.Metadata.ResourceVersion},
			"items":    items,
		})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// captureKey marks a request whose reply updates held Secrets.
type captureKey struct{}

// capture is a held Secret a reply updates, unless written since gen.
type capture struct {
	held *held
	gen  uint64
	list bool // the reply is a list of the Secret
}

// keep is the upstream's ModifyResponse: a reply that read or wrote a held Secret is
// kept for the reads after it.
func (p *Proxy) keep(resp *http.Response) error {
	captures, _ := resp.Request.Context().Value(captureKey{}).([]capture)
	if len(captures) == 0 {
		return nil
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var body []byte
	if resp.StatusCode == http.StatusOK && mediaType == "application/json" && resp.Header.Get("Content-Encoding") == "" {
		raw, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		if err != nil {
			return err
		}
		body = raw
	}
	p.holds.mu.Lock()
	defer p.holds.mu.Unlock()
	for _, c := range captures {
		if c.held.gen != c.gen {
			continue // written since the request left
		}
		c.held.secret = nil
		if body != nil {
			c.held.secret = secretOf(body, c.list)
		}
	}
	return nil
}

// secretOf is the Secret a reply holds, as JSON: the reply itself, or a list's one item
// with its kind; nil when there is not exactly one.
func secretOf(body []byte, list bool) []byte {
	if !list {
		var obj struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(body, &obj) != nil || obj.Kind != "Secret" {
			return nil
		}
		return body
	}
	var l struct {
		Items []map[string]json.RawMessage `json:"items"`
	}
	if json.Unmarshal(body, &l) != nil || len(l.Items) != 1 {
		return nil
	}
	item := l.Items[0]
	item["kind"], item["apiVersion"] = json.RawMessage(`"Secret"`), json.RawMessage(`"v1"`)
	secret, err := json.Marshal(item)
	if err != nil {
		return nil
	}
	return secret
}
