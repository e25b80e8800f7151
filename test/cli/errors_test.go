package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"terraplane.io/terraplane/internal/devenv"
)

// assertOneLineError checks a failure the way a user reads it: exit code code (2 for a
// usage error, 1 for any other failure) and one "error:" line on stderr (plus a --help
// hint for usage errors), no log lines, no stack traces.
func assertOneLineError(t *testing.T, r result, code int, want string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d (stderr %q)", r.code, code, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "error: ") || !strings.Contains(lines[0], want) {
		t.Errorf("stderr %q, want an error: line containing %q", r.stderr, want)
	}
	if len(lines) > 2 || (len(lines) == 2 && !strings.HasPrefix(lines[1], "see terraplane ")) {
		t.Errorf("stderr has more than the error line:\n%s", r.stderr)
	}
	if usage := len(lines) == 2; usage != (code == 2) {
		t.Errorf("a usage error, and only a usage error, points at --help:\n%s", r.stderr)
	}
	for _, noise := range []string{`"level"`, "goroutine ", "panic", ".go:", "\tat "} {
		if strings.Contains(r.stderr+r.stdout, noise) {
			t.Errorf("output holds %q (a log line or a stack trace):\n%s%s", noise, r.stdout, r.stderr)
		}
	}
}

func TestNoKubeconfigIsOneClearLine(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"migrate", dir},
		{"export", "Module", "orders-db"},
		{"unlock", "Module/orders-db"},
		{"trace", "bucket/photos"},
		{"get", "approvals"},
		{"plan", "show", "module/orders-db"},
		{"controller"},
	} {
		t.Run(args[0], func(t *testing.T) {
			r := terraplane(t, userEnv(t), args...)
			assertOneLineError(t, r, 1, "no kubeconfig found: pass --kubeconfig or set KUBECONFIG")
			if r.stderr != "error: no kubeconfig found: pass --kubeconfig or set KUBECONFIG\n" {
				t.Errorf("stderr %q", r.stderr)
			}
		})
	}
	r := terraplane(t, userEnv(t), "unlock", "Module/x", "--kubeconfig", filepath.Join(dir, "nope"))
	assertOneLineError(t, r, 1, "kubeconfig "+filepath.Join(dir, "nope")+": no such file or directory")
}

func TestUsageAndInputErrors(t *testing.T) {
	r := terraplane(t, userEnv(t), "migrate")
	assertOneLineError(t, r, 2, "accepts 1 arg(s), received 0")
	if !strings.Contains(r.stderr, "see terraplane migrate --help") {
		t.Errorf("a usage error points at --help: %q", r.stderr)
	}
	r = terraplane(t, userEnv(t), "module", "inspect", "/missing/module")
	assertOneLineError(t, r, 1, "/missing/module")
	r = terraplane(t, userEnv(t), "migrate", "/missing/dir")
	assertOneLineError(t, r, 1, "/missing/dir is not a directory")
	r = terraplane(t, userEnv(t), "no-such-command")
	assertOneLineError(t, r, 2, `unknown command "no-such-command"`)

	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "main.tf"), []byte(`variable "x" {`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = terraplane(t, userEnv(t), "module", "inspect", bad)
	assertOneLineError(t, r, 1, bad)
}

func TestVersion(t *testing.T) {
	r := terraplane(t, userEnv(t), "version")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !regexp.MustCompile(`(?m)^terraplane \S+.* go1\.\d+`).MatchString(r.stdout) {
		t.Errorf("no terraplane version line: %q", r.stdout)
	}
	if !regexp.MustCompile(`(?m)^terraform  \d+\.\d+\.\d+ \(/.+\)$`).MatchString(r.stdout) {
		t.Errorf("no terraform version line: %q", r.stdout)
	}
	if v := terraplane(t, userEnv(t), "--version"); v.code != 0 || v.stdout != r.stdout {
		t.Errorf("terraplane --version prints what terraplane version does: exit %d\n%s", v.code, v.stdout)
	}
	r = terraplane(t, userEnv(t), "version", "--terraform", "/no/such/terraform")
	if r.code != 0 || !strings.Contains(r.stdout, "terraform  not found") {
		t.Errorf("a missing terraform is reported, not fatal: %d %q %q", r.code, r.stdout, r.stderr)
	}
	// OpenTofu is named for what it is, never "terraform"
	tofu := filepath.Join(devenv.BinDir(), "tofu")
	if _, err := os.Stat(tofu); err != nil {
		t.Fatalf("OpenTofu is missing (%v): run make tools-test", err)
	}
	r = terraplane(t, userEnv(t), "version", "--terraform", tofu)
	if r.code != 0 || !regexp.MustCompile(`(?m)^opentofu   \d+\.\d+\.\d+ \(`+regexp.QuoteMeta(tofu)+`\)$`).MatchString(r.stdout) ||
		strings.Contains(r.stdout, "terraform") {
		t.Errorf("version --terraform %s: exit %d, want an opentofu line and no terraform:\n%s%s", tofu, r.code, r.stdout, r.stderr)
	}
}

// TestEveryCommandHasExamples checks the help of every command a user runs.
func TestEveryCommandHasExamples(t *testing.T) {
	for _, path := range everyCommand(t) {
		r := terraplane(t, userEnv(t), append(strings.Fields(path), "--help")...)
		if r.code != 0 || !strings.Contains(r.stdout, "\nExamples:\n") && !strings.Contains(r.stdout, "\nExample:\n") {
			t.Errorf("terraplane %s --help has no Example section:\n%s", path, r.stdout)
		}
	}
	for _, path := range []string{"controller", "migrate", "export", "unlock", "plan show", "approve", "trace", "get approvals"} {
		r := terraplane(t, userEnv(t), append(strings.Fields(path), "--help")...)
		if !strings.Contains(r.stdout, "--context string") || !strings.Contains(r.stdout, "--kubeconfig string") {
			t.Errorf("terraplane %s talks to a cluster and takes --kubeconfig and --context:\n%s", path, r.stdout)
		}
	}
}
