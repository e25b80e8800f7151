package modsource

import (
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	corev1 "k8s.io/api/core/v1"
)

// Keys of a git credentials Secret (the names Flux uses).
const (
	KeyUsername    = "username"
	KeyPassword    = "password"
	KeyBearerToken = "bearerToken"
	KeyIdentity    = "identity"
	KeyKnownHosts  = "known_hosts"
)

// gitAuth builds go-git credentials for url from a Secret: basic auth or a bearer token
// over HTTP(S), a private key checked against known_hosts over SSH.
func gitAuth(s *corev1.Secret, url, tmpDir string) (transport.AuthMethod, error) {
	ep, err := transport.NewEndpoint(url)
	if err != nil {
		return nil, fmt.Errorf("parse URL: %w", err)
	}
	get := func(k string) string { return string(s.Data[k]) }
	switch ep.Protocol {
	case "http", "https":
		if t := get(KeyBearerToken); t != "" {
			return &githttp.TokenAuth{Token: t}, nil
		}
		if get(KeyPassword) == "" {
			return nil, fmt.Errorf("an HTTP(S) source needs %s and %s (a token goes in %s), or %s", KeyUsername, KeyPassword, KeyPassword, KeyBearerToken)
		}
		user := get(KeyUsername)
		if user == "" {
			user = "git" // hosts that take a token as the password ignore the user name, but want one
		}
		return &githttp.BasicAuth{Username: user, Password: get(KeyPassword)}, nil
	case "ssh":
		return sshAuth(ep, []byte(get(KeyIdentity)), get(KeyPassword), s.Data[KeyKnownHosts], tmpDir)
	}
	return nil, fmt.Errorf("%s sources take no credentials", ep.Protocol)
}

// sshAuth is a private key, with the server's key checked against knownHosts (required:
// a source never trusts an unknown host).
func sshAuth(ep *transport.Endpoint, identity []byte, passphrase string, knownHosts []byte, tmpDir string) (transport.AuthMethod, error) {
	if len(identity) == 0 {
		return nil, fmt.Errorf("an SSH source needs %s (a private key)", KeyIdentity)
	}
	if len(knownHosts) == 0 {
		return nil, fmt.Errorf("an SSH source needs %s with the server's host key (ssh-keyscan HOST)", KeyKnownHosts)
	}
	user := ep.User
	if user == "" {
		user = "git"
	}
	auth, err := gitssh.NewPublicKeys(user, identity, passphrase)
	if err != nil {
		return nil, fmt.Errorf("%s is not a usable private key (encrypted without %s?)", KeyIdentity, KeyPassword)
	}
	// The known_hosts reader takes files; the file holds only public host keys.
	if err := os.MkdirAll(tmpDir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(tmpDir, "known_hosts-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(knownHosts); err != nil {
		_ = f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	db, err := gitssh.NewKnownHostsDb(f.Name())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", KeyKnownHosts, err)
	}
	port := ep.Port
	if port == 0 {
		port = 22
	}
	auth.HostKeyCallback = db.HostKeyCallback()
	auth.HostKeyAlgorithms = db.HostKeyAlgorithms(net.JoinHostPort(ep.Host, strconv.Itoa(port)))
	return auth, nil
}
