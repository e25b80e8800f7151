package engine

import "testing"

// TestInputsDigest: a reread answers only for the inputs its plan was made from: any
// change to a file, the environment (credentials), a secret variable, the backend
// settings, the lock or terraform gives another digest, and nothing else does.
func TestInputsDigest(t *testing.T) {
	base := func() Workspace {
		return Workspace{ID: "a", Name: "team/a",
			Files:         map[string][]byte{"main.tf": []byte(`resource "terraform_data" "a" {}`), "terraform.tfvars.json": []byte(`{"size":1}`)},
			Env:           map[string]string{"AWS_ACCESS_KEY_ID": "key"},
			SecretVars:    map[string]any{"password": "s3cret"},
			BackendConfig: map[string]string{"secret_suffix": "a", "namespace": "team"},
			Lock:          []byte("lock")}
	}
	e := &Engine{execPath: "/bin/terraform"}
	want := e.inputsDigest(base())
	for name, change := range map[string]func(*Workspace, *Engine){
		"a file's content": func(ws *Workspace, _ *Engine) { ws.Files["main.tf"] = []byte(`resource "terraform_data" "b" {}`) },
		"a file's name": func(ws *Workspace, _ *Engine) {
			ws.Files["other.tf"] = ws.Files["main.tf"]
			delete(ws.Files, "main.tf")
		},
		"the credentials":          func(ws *Workspace, _ *Engine) { ws.Env["AWS_ACCESS_KEY_ID"] = "rotated" },
		"a secret variable":        func(ws *Workspace, _ *Engine) { ws.SecretVars["password"] = "other" },
		"the backend settings":     func(ws *Workspace, _ *Engine) { ws.BackendConfig["secret_suffix"] = "b" },
		"the lock":                 func(ws *Workspace, _ *Engine) { ws.Lock = []byte("newer") },
		"terraform":                func(_ *Workspace, e *Engine) { e.execPath = "/bin/tofu" },
		"a value moved to the key": func(ws *Workspace, _ *Engine) { ws.Env = map[string]string{"AWS_ACCESS_KEY_IDkey": ""} },
	} {
		ws, other := base(), &Engine{execPath: e.execPath}
		change(&ws, other)
		if other.inputsDigest(ws) == want {
			t.Errorf("%s changed: the digest did not", name)
		}
	}
	same := base()
	same.Name, same.Timeout, same.Pool = "team/renamed", 5, "other" // not what a plan is made from
	if e.inputsDigest(same) != want {
		t.Error("the digest changed with what a plan is not made from")
	}
}
