package modsource

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	gittransport "github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// userError is the reason and message of a user error; reason "" when err is none.
func userError(t *testing.T, err error) (string, string) {
	t.Helper()
	u, ok := resource.AsUserError(err)
	if !ok {
		t.Fatalf("%v is not a user error", err)
	}
	return u.Reason, u.Message
}

// TestGitFetchError: a git error becomes one line with a reason an admin can act on,
// telling whether a Secret was used and which.
func TestGitFetchError(t *testing.T) {
	url := "ssh://git@git.example.com/team/mods.git"
	anonymous := &gitRepo{src: terraformv1.GitSource{URL: url}}
	withSecret := &gitRepo{src: terraformv1.GitSource{URL: url}, secret: "ns/creds"}
	for _, tc := range []struct {
		name   string
		repo   *gitRepo
		err    error
		access bool
		reason string
		msg    string
	}{
		{"authentication without a Secret", anonymous, gittransport.ErrAuthenticationRequired, true,
			ReasonAuthFailed, "git " + url + ": authentication failed: it asks for credentials: name a Secret in secretRef"},
		{"authentication with a Secret", withSecret, fmt.Errorf("list: %w", gittransport.ErrAuthenticationRequired), true,
			ReasonAuthFailed, "git " + url + ": authentication failed: it refused the credentials in Secret ns/creds"},
		{"ssh key refused", withSecret, errors.New("ssh: handshake failed: ssh: unable to authenticate, attempted methods [none publickey]"), true,
			ReasonAuthFailed, "git " + url + ": authentication failed: it refused the credentials in Secret ns/creds"},
		{"access denied", withSecret, gittransport.ErrAuthorizationFailed, true,
			ReasonAuthFailed, "git " + url + ": access denied: it refused the credentials in Secret ns/creds (they may not read this repository)"},
		{"no repository", anonymous, gittransport.ErrRepositoryNotFound, true,
			ReasonNotFound, "git " + url + ": repository not found (or the credentials may not see it)"},
		{"unknown host key", withSecret, errors.New("ssh: handshake failed: knownhosts: key mismatch"), true,
			ReasonHostKeyRejected, "git " + url + ": the server's SSH host key is not in known_hosts of Secret ns/creds (knownhosts: key mismatch)"},
		{"no answer", anonymous, fmt.Errorf("dial: %w", context.DeadlineExceeded), false,
			ReasonFetchFailed, "git " + url + ": no answer within 2m0s"},
		{"anything else", anonymous, errors.New("connection reset by peer"), false,
			ReasonFetchFailed, "git " + url + ": connection reset by peer"},
	} {
		if got := isAccessError(tc.err); got != tc.access {
			t.Errorf("%s: isAccessError %v, want %v", tc.name, got, tc.access)
		}
		reason, msg := userError(t, tc.repo.fetchError(tc.err))
		if reason != tc.reason || !strings.HasPrefix(msg, tc.msg) {
			t.Errorf("%s: %s %q, want %s %q", tc.name, reason, msg, tc.reason, tc.msg)
		}
	}
}

// TestOCIPullError: a registry's refusal tells whether a pull secret was used and which;
// a missing artifact and other failures have their own reasons.
func TestOCIPullError(t *testing.T) {
	ref := "ghcr.io/acme/db:v1"
	anonymous := &ociArtifact{src: terraformv1.OCISource{Ref: ref}}
	withSecret := &ociArtifact{src: terraformv1.OCISource{Ref: ref}, secret: "ns/pull"}
	status := func(code int) error { return &transport.Error{StatusCode: code} }
	for _, tc := range []struct {
		name   string
		a      *ociArtifact
		err    error
		reason string
		msg    string
	}{
		{"unauthorized without a secret", anonymous, status(http.StatusUnauthorized),
			ReasonAuthFailed, "pull " + ref + ": the registry asks for credentials (Unauthorized): name a pull secret in secretRef"},
		{"forbidden with a secret", withSecret, fmt.Errorf("head: %w", status(http.StatusForbidden)),
			ReasonAuthFailed, "pull " + ref + ": the registry refused the credentials in pull secret ns/pull (Forbidden)"},
		{"not found", withSecret, status(http.StatusNotFound),
			ReasonNotFound, "pull " + ref + ": not in the registry"},
		{"server error", anonymous, status(http.StatusInternalServerError),
			ReasonFetchFailed, "pull " + ref + ": "},
		{"no registry", anonymous, errors.New("dial tcp: no such host"),
			ReasonFetchFailed, "pull " + ref + ": dial tcp: no such host"},
	} {
		reason, msg := userError(t, tc.a.pullError(tc.err))
		if reason != tc.reason || !strings.HasPrefix(msg, tc.msg) {
			t.Errorf("%s: %s %q, want %s %q", tc.name, reason, msg, tc.reason, tc.msg)
		}
	}
}
