package modsource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"sigs.k8s.io/controller-runtime/pkg/client"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
)

// gitTimeout bounds one lookup or fetch of a repository.
const gitTimeout = 2 * time.Minute

// commitHash matches a full SHA-1 or SHA-256 commit hash: a pinned ref.
var commitHash = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// gitRepo is one git source with the credentials it is read with.
type gitRepo struct {
	src    terraformv1.GitSource
	auth   transport.AuthMethod
	authID string // namespace/name@resourceVersion of the Secret; "" without one
	secret string // namespace/name of the Secret, for messages
}

// fromGit resolves the ref to a commit (pinned, or looked up every refresh interval),
// fetches that commit once and reads the module at path.
func (l *Loader) fromGit(ctx context.Context, c client.Reader, namespace string, src terraformv1.GitSource) (*Loaded, error) {
	if err := l.admit("git", src.URL, src.URL); err != nil {
		return nil, err
	}
	repo := &gitRepo{src: src}
	s, authID, err := secret(ctx, c, namespace, src.SecretRef)
	if err != nil {
		return nil, err
	}
	if s != nil {
		repo.secret, repo.authID = namespace+"/"+s.Name, authID
		if repo.auth, err = gitAuth(s, src.URL, l.CacheDir); err != nil {
			return nil, resource.UserErrorf(ReasonSecretInvalid, "Secret %s for git %s: %v", repo.secret, src.URL, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	moving := !commitHash.MatchString(src.Ref)
	commit := src.Ref
	if moving {
		commit, err = l.resolve("git/"+src.URL+"@"+src.Ref+"#"+repo.authID, func() (string, error) { return repo.lookup(ctx) })
		if err != nil {
			return nil, err
		}
	}
	dir := strings.Trim(path.Clean("/"+src.Path), "/")
	return l.moving(moving)(l.load("git/"+src.URL+"@"+commit+"//"+dir+"#"+repo.authID, func() (*Loaded, error) {
		m, err := repo.read(ctx, l.CacheDir, l.maxFetch(), commit, func(c *object.Commit) (*module.Module, error) {
			files, err := treeFiles(c, dir, src.URL)
			if err != nil {
				return nil, err
			}
			m, err := module.FromFiles(files)
			if err == nil && dir != "" && m.CallsOutside() { // ../x: the whole repository, as terraform fetches it
				if files, err = treeFiles(c, "", src.URL); err != nil {
					return nil, err
				}
				m, err = module.FromTree(files, dir)
			}
			if err != nil {
				return nil, resource.UserErrorf(ReasonInvalidModule, "module at %s//%s?ref=%s: %v", src.URL, src.Path, src.Ref, err)
			}
			return m, nil
		})
		if err != nil {
			return nil, err
		}
		return &Loaded{Module: m, Revision: commit}, nil
	}))
}

// local is the path of a file:// repository, read in place.
func (g *gitRepo) local() (string, bool) {
	return strings.CutPrefix(g.src.URL, "file://")
}

// lookup resolves a tag or branch to its commit, like git ls-remote (tags are peeled).
func (g *gitRepo) lookup(ctx context.Context) (string, error) {
	if p, ok := g.local(); ok {
		r, err := git.PlainOpen(p)
		if err != nil {
			return "", resource.UserErrorf(ReasonNotFound, "git repository %s: %v", g.src.URL, err)
		}
		h, err := r.ResolveRevision(plumbing.Revision(g.src.Ref))
		if err != nil {
			return "", resource.UserErrorf(ReasonNotFound, "ref %s is not in %s: %v", g.src.Ref, g.src.URL, err)
		}
		return h.String(), nil
	}
	remote := git.NewRemote(nil, &config.RemoteConfig{Name: "origin", URLs: []string{g.src.URL}})
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: g.auth, PeelingOption: git.AppendPeeled})
	if err != nil {
		return "", g.fetchError(err)
	}
	byName := map[string]string{}
	for _, r := range refs {
		if r.Type() == plumbing.HashReference {
			byName[r.Name().String()] = r.Hash().String()
		}
	}
	for _, name := range []string{g.src.Ref, "refs/tags/" + g.src.Ref + "^{}", "refs/tags/" + g.src.Ref, "refs/heads/" + g.src.Ref} {
		if h, ok := byName[name]; ok {
			return h, nil
		}
	}
	return "", resource.UserErrorf(ReasonNotFound, "ref %s is neither a tag nor a branch of %s", g.src.Ref, g.src.URL)
}

// read fetches commit (at most limit bytes) and builds the module from it.
func (g *gitRepo) read(ctx context.Context, cacheDir string, limit int64, commit string, build func(*object.Commit) (*module.Module, error)) (*module.Module, error) {
	var repo *git.Repository
	if p, ok := g.local(); ok {
		r, err := git.PlainOpen(p)
		if err != nil {
			return nil, resource.UserErrorf(ReasonNotFound, "git repository %s: %v", g.src.URL, err)
		}
		repo = r
	} else {
		if err := os.MkdirAll(cacheDir, 0o700); err != nil {
			return nil, err
		}
		tmp, err := os.MkdirTemp(cacheDir, "git-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		if repo, err = g.fetch(ctx, tmp, limit, commit); err != nil {
			return nil, err
		}
	}
	c, err := repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return nil, resource.UserErrorf(ReasonNotFound, "commit %s is not in %s: %v", commit, g.src.URL, err)
	}
	return build(c)
}

// fetch brings commit (with depth 1 where the server allows) into an object store in
// dir, and stops once it has brought more than limit bytes.
func (g *gitRepo) fetch(ctx context.Context, dir string, limit int64, commit string) (*git.Repository, error) {
	store := &cappedStorage{Storage: filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault()), limit: limit}
	tooLarge := resource.UserErrorf(ReasonFetchTooLarge, "git %s: fetching ref %s brought more than %s, the --module-source-max-fetch limit: keep modules in a smaller repository, or raise the limit",
		g.src.URL, g.src.Ref, size(limit))
	repo, err := git.Init(store, nil)
	if err != nil {
		return nil, fmt.Errorf("init object store: %w", err)
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{g.src.URL}}); err != nil {
		return nil, fmt.Errorf("add remote: %w", err)
	}
	for _, spec := range fetchSpecs(g.src.Ref, commit) {
		err = repo.FetchContext(ctx, &git.FetchOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{spec}, Depth: 1, Auth: g.auth, Tags: git.NoTags})
		if store.over() {
			return nil, tooLarge
		}
		if err == nil || errors.Is(err, git.NoErrAlreadyUpToDate) {
			if _, err := repo.CommitObject(plumbing.NewHash(commit)); err == nil {
				return repo, nil
			}
		} else if isAccessError(err) {
			return nil, g.fetchError(err)
		}
	}
	// A server that hands out no single commit: fetch every branch and tag.
	err = repo.FetchContext(ctx, &git.FetchOptions{RemoteName: "origin", Auth: g.auth, Tags: git.AllTags,
		RefSpecs: []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*"}})
	if store.over() {
		return nil, tooLarge
	}
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, g.fetchError(err)
	}
	return repo, nil
}

// fetchSpecs are the refspecs that may bring commit, the one ref resolved to, tried in
// turn: the commit itself when ref pins one, ref as written when it is a full name,
// otherwise the tag of that name, then the branch.
func fetchSpecs(ref, commit string) []config.RefSpec {
	switch {
	case commitHash.MatchString(ref):
		return []config.RefSpec{config.RefSpec(commit + ":refs/heads/pinned")}
	case strings.HasPrefix(ref, "refs/"):
		return []config.RefSpec{config.RefSpec("+" + ref + ":" + ref)}
	}
	return []config.RefSpec{config.RefSpec("+refs/tags/" + ref + ":refs/tags/" + ref),
		config.RefSpec("+refs/heads/" + ref + ":refs/heads/" + ref)}
}

// treeFiles reads the regular files of commit's tree below dir, within the module limits;
// a symlink is refused, as it could point anywhere.
func treeFiles(c *object.Commit, dir, url string) (map[string][]byte, error) {
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("read tree of %s: %w", c.Hash, err)
	}
	if dir != "" {
		if tree, err = tree.Tree(dir); err != nil {
			return nil, resource.UserErrorf(ReasonInvalidModule, "path %s is not a directory in %s at %s", dir, url, c.Hash)
		}
	}
	files := map[string][]byte{}
	var total int64
	err = tree.Files().ForEach(func(f *object.File) error {
		if f.Mode == filemode.Symlink {
			return resource.UserErrorf(ReasonInvalidModule, "%s in %s is a symlink; module files must be regular files", f.Name, url)
		}
		if total += f.Size; len(files) >= moduleLimits.MaxFiles || f.Size > moduleLimits.MaxFileBytes || total > moduleLimits.MaxTotalBytes {
			return resource.UserErrorf(ReasonInvalidModule, "module at %s//%s is over the limits (%d files, %d bytes per file, %d bytes)",
				url, dir, moduleLimits.MaxFiles, moduleLimits.MaxFileBytes, moduleLimits.MaxTotalBytes)
		}
		r, err := f.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		files[f.Name] = b
		return err
	})
	return files, err
}

// isAccessError says the server refused us rather than the request.
func isAccessError(err error) bool {
	return errors.Is(err, transport.ErrAuthenticationRequired) || errors.Is(err, transport.ErrAuthorizationFailed) ||
		errors.Is(err, transport.ErrRepositoryNotFound) || strings.Contains(err.Error(), "unable to authenticate") ||
		strings.Contains(err.Error(), "knownhosts:")
}

// fetchError turns a git error into one line an admin can act on; secret values never
// appear in it (the URL carries none: CRD validation refuses credentials in it).
func (g *gitRepo) fetchError(err error) error {
	url, creds := g.src.URL, "it asks for credentials: name a Secret in secretRef"
	if g.secret != "" {
		creds = "it refused the credentials in Secret " + g.secret
	}
	msg := err.Error()
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), strings.Contains(msg, "unable to authenticate"):
		return resource.UserErrorf(ReasonAuthFailed, "git %s: authentication failed: %s", url, creds)
	case errors.Is(err, transport.ErrAuthorizationFailed):
		return resource.UserErrorf(ReasonAuthFailed, "git %s: access denied: %s (they may not read this repository)", url, creds)
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return resource.UserErrorf(ReasonNotFound, "git %s: repository not found (or the credentials may not see it)", url)
	case strings.Contains(msg, "knownhosts:"):
		return resource.UserErrorf(ReasonHostKeyRejected, "git %s: the server's SSH host key is not in known_hosts of Secret %s (%s)", url, g.secret, msg[strings.Index(msg, "knownhosts:"):])
	case errors.Is(err, context.DeadlineExceeded):
		return resource.UserErrorf(ReasonFetchFailed, "git %s: no answer within %s", url, gitTimeout)
	}
	return resource.UserErrorf(ReasonFetchFailed, "git %s: %v", url, err)
}
