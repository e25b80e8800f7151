package modsource

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"terraplane.io/terraplane/internal/resource"
)

// address is a module source, or an allow-list entry, reduced to what the allow-list
// compares: scheme, host and path. User names, queries and fragments play no part.
type address struct {
	scheme string // https, http, ssh, file or oci
	host   string // lower case, with its port unless it is the scheme's default; "" for file
	path   string // "/"-rooted, without a trailing slash; "" for the root
}

// defaultPorts are left out of hosts, so that git.example.com:443 is git.example.com.
var defaultPorts = map[string]string{"https": "443", "http": "80", "ssh": "22"}

// gitSchemes are the URL schemes a git source may use.
var gitSchemes = map[string]bool{"https": true, "http": true, "ssh": true, "file": true}

// insecureSchemes are those a git source may use only with AllowInsecure: plain HTTP can
// be altered on the way, and file:// reads the controller's own disk.
var insecureSchemes = map[string]bool{"http": true, "file": true}

// scpLike is git's scp-like address, user@host:path, which is SSH.
var scpLike = regexp.MustCompile(`^[A-Za-z0-9._-]+@([A-Za-z0-9.-]+):(.*)$`)

// ValidateAllowList checks the entries of --module-source-allow: each is a git URL
// (https://, http://, ssh://, file://), an scp-like git address (git@host:path), or an
// OCI repository (oci://registry/path, or registry/path).
func ValidateAllowList(entries []string) error {
	for _, e := range entries {
		if _, err := parseEntry(e); err != nil {
			return fmt.Errorf("--module-source-allow entry %q: %w", e, err)
		}
	}
	return nil
}

// allowed reports whether source, a git URL or oci:// and an OCI reference, is admitted
// by the allow-list: an entry with the same scheme and host (port included) whose path
// is the source's or a parent of it, compared segment by segment. No list admits any.
func (l *Loader) allowed(source string) bool {
	if len(l.AllowedSources) == 0 {
		return true
	}
	src, err := parseSource(source)
	if err != nil {
		return false
	}
	for _, e := range l.AllowedSources {
		if entry, err := parseEntry(e); err == nil && entry.admits(src) {
			return true
		}
	}
	return false
}

// admit returns the user error that refuses a source of kind (git or OCI) shown as
// shown: a git source over http:// or file:// without AllowInsecure, or one the
// allow-list does not admit. source is a git URL, or oci:// and the OCI reference.
func (l *Loader) admit(kind, shown, source string) error {
	if kind == "git" {
		a, err := parseGit(source)
		if err != nil {
			return resource.UserErrorf(ReasonInvalidSource, "git source %s: %v", shown, err)
		}
		if insecureSchemes[a.scheme] && !l.AllowInsecure {
			return resource.UserErrorf(ReasonNotAllowed, "git source %s uses %s://, which is refused unless the controller runs with --allow-insecure-module-sources (plain HTTP can be altered on the way; file:// reads the controller's own disk)",
				shown, a.scheme)
		}
	}
	if !l.allowed(source) {
		return resource.UserErrorf(ReasonNotAllowed, "%s source %s is not allowed by --module-source-allow (%s): an entry admits a source with the same scheme, host and port whose path is the entry's path or below it",
			kind, shown, strings.Join(l.AllowedSources, ", "))
	}
	return nil
}

// admits reports whether entry a admits source s.
func (a address) admits(s address) bool {
	return a.scheme == s.scheme && a.host == s.host &&
		(a.path == "" || s.path == a.path || strings.HasPrefix(s.path, a.path+"/"))
}

// parseSource reads a git URL, or oci:// and an OCI reference.
func parseSource(s string) (address, error) {
	if ref, ok := strings.CutPrefix(s, "oci://"); ok {
		r, err := name.ParseReference(ref)
		if err != nil {
			return address{}, err
		}
		repo := r.Context()
		return address{scheme: "oci", host: strings.ToLower(repo.RegistryStr()), path: "/" + repo.RepositoryStr()}, nil
	}
	return parseGit(s)
}

// parseEntry reads an allow-list entry: a git URL or scp-like address, or an OCI
// repository with or without oci://.
func parseEntry(s string) (address, error) {
	if strings.Contains(s, "://") && !strings.HasPrefix(s, "oci://") || scpLike.MatchString(s) {
		return parseGit(s)
	}
	host, p, _ := strings.Cut(strings.TrimPrefix(s, "oci://"), "/")
	if host = strings.ToLower(host); host == "" {
		return address{}, fmt.Errorf("no registry")
	}
	if host == "docker.io" {
		host = name.DefaultRegistry
	}
	p, err := cleanPath("/" + p)
	return address{scheme: "oci", host: host, path: p}, err
}

// parseGit reads a git URL or scp-like address. A path with . or .. segments, or with
// escapes that do not read back the same, is refused: what a server makes of it is not
// what the allow-list compared.
func parseGit(s string) (address, error) {
	if !strings.Contains(s, "://") {
		m := scpLike.FindStringSubmatch(s)
		if m == nil {
			return address{}, fmt.Errorf("neither a URL nor an scp-like address (user@host:path)")
		}
		p, err := cleanPath("/" + strings.TrimPrefix(m[2], "/"))
		return address{scheme: "ssh", host: strings.ToLower(m[1]), path: p}, err
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return address{}, err
	case !gitSchemes[u.Scheme]:
		return address{}, fmt.Errorf("scheme %s:// is not one of https, http, ssh, file", u.Scheme)
	case u.Opaque != "" || u.RawPath != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return address{}, fmt.Errorf("escapes, queries and fragments are not allowed in the URL")
	case u.Host == "" && u.Scheme != "file":
		return address{}, fmt.Errorf("no host")
	}
	host := strings.ToLower(u.Host)
	if u.Port() != "" && u.Port() == defaultPorts[u.Scheme] {
		host = strings.ToLower(strings.TrimSuffix(u.Host, ":"+u.Port()))
	}
	if u.Scheme == "file" && host == "localhost" {
		host = ""
	}
	p, err := cleanPath(u.Path)
	return address{scheme: u.Scheme, host: host, path: p}, err
}

// cleanPath drops the trailing slashes of a "/"-rooted path, and refuses . and ..
// segments and backslashes.
func cleanPath(p string) (string, error) {
	if strings.Contains(p, `\`) {
		return "", fmt.Errorf("backslash in path %q", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return "", fmt.Errorf("path %q has . or .. segments", p)
		}
	}
	return strings.TrimRight(p, "/"), nil
}
