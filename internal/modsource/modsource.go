package modsource

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/archive"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
)

// Reasons of the user errors a source can give.
const (
	ReasonInvalidSource   = "InvalidSource"
	ReasonNotAllowed      = "ModuleSourceNotAllowed"
	ReasonNotFound        = "ModuleSourceNotFound"
	ReasonFetchFailed     = "ModuleFetchFailed"
	ReasonInvalidModule   = "InvalidModule"
	ReasonSecretNotFound  = "SourceSecretNotFound"
	ReasonSecretInvalid   = "SourceSecretInvalid"
	ReasonAuthFailed      = "SourceAuthFailed"
	ReasonHostKeyRejected = "SourceHostKeyRejected"
	ReasonFetchTooLarge   = "ModuleFetchTooLarge"
)

// DefaultRefreshInterval is how long a branch, tag or OCI tag stays resolved.
const DefaultRefreshInterval = 5 * time.Minute

// DefaultMaxFetchBytes caps what one git fetch may bring (its pack).
const DefaultMaxFetchBytes = 100 << 20

// moduleLimits cap a module read from an archive or a repository: files, bytes per file,
// bytes in all.
var moduleLimits = archive.Limits{MaxFiles: 1000, MaxFileBytes: 4 << 20, MaxTotalBytes: 32 << 20}

// unusedAfter is how long a cached module nobody asked for is kept.
const unusedAfter = time.Hour

// Loader fetches and caches modules.
type Loader struct {
	// CacheDir holds temporary git object stores while a fetch runs.
	CacheDir string
	// AllowedSources, when not empty, lists the git URLs and OCI repositories sources
	// may use, each with what lies below it (see ValidateAllowList and allowed).
	AllowedSources []string
	// RefreshInterval is how long a branch, tag or OCI tag stays resolved to one commit
	// or digest; 0 means DefaultRefreshInterval.
	RefreshInterval time.Duration
	// AllowInsecure lets git sources use http:// and file://.
	AllowInsecure bool
	// MaxFetchBytes caps what one git fetch may bring; 0 means DefaultMaxFetchBytes.
	MaxFetchBytes int64

	flight singleflight.Group
	mu     sync.Mutex
	cache  map[string]*cached
	refs   map[string]resolved
}

// Loaded is a module and what it was read from.
type Loaded struct {
	*module.Module
	// Revision is the git commit, the OCI digest or the ConfigMap's resourceVersion.
	Revision string
	// Moving is true when the source names a branch, a tag or an OCI tag, which is looked
	// up again every refresh interval.
	Moving bool
}

type cached struct {
	loaded *Loaded
	used   time.Time
}

// resolved is a branch, tag or OCI tag looked up at a time.
type resolved struct {
	revision string
	at       time.Time
}

// Load returns the module src points at; ConfigMaps and Secrets are read from namespace.
func (l *Loader) Load(ctx context.Context, c client.Reader, namespace string, src terraformv1.ModuleSource) (*module.Module, error) {
	ld, err := l.LoadSource(ctx, c, namespace, src)
	if err != nil {
		return nil, err
	}
	return ld.Module, nil
}

// LoadSource is Load with the revision the module came from.
func (l *Loader) LoadSource(ctx context.Context, c client.Reader, namespace string, src terraformv1.ModuleSource) (*Loaded, error) {
	switch {
	case src.ConfigMap != nil:
		return l.fromConfigMap(ctx, c, namespace, src.ConfigMap.Name)
	case src.Git != nil:
		return l.fromGit(ctx, c, namespace, *src.Git)
	case src.OCI != nil:
		return l.fromOCI(ctx, c, namespace, *src.OCI)
	default:
		return nil, resource.UserErrorf(ReasonInvalidSource, "the module source sets none of configMap, git or oci")
	}
}

// RefreshPeriod is how often a moving source is looked up again.
func (l *Loader) RefreshPeriod() time.Duration {
	if l.RefreshInterval > 0 {
		return l.RefreshInterval
	}
	return DefaultRefreshInterval
}

// load returns the module cached under key, or reads it once however many ask at once.
func (l *Loader) load(key string, read func() (*Loaded, error)) (*Loaded, error) {
	l.mu.Lock()
	if c, ok := l.cache[key]; ok {
		c.used = time.Now()
		l.mu.Unlock()
		return c.loaded, nil
	}
	l.mu.Unlock()
	v, err, _ := l.flight.Do(key, func() (any, error) {
		// a read that ended between the look above and this flight has cached the module
		l.mu.Lock()
		if c, ok := l.cache[key]; ok {
			l.mu.Unlock()
			return c.loaded, nil
		}
		l.mu.Unlock()
		ld, err := read()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.cache == nil {
			l.cache = map[string]*cached{}
		}
		now := time.Now()
		for k, c := range l.cache {
			if now.Sub(c.used) > unusedAfter {
				delete(l.cache, k)
			}
		}
		l.cache[key] = &cached{loaded: ld, used: now}
		return ld, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Loaded), nil
}

// moving marks what load returns as read from a moving source or not (the cache holds
// modules by content, which a pinned and a moving source may share).
func (l *Loader) moving(moving bool) func(*Loaded, error) (*Loaded, error) {
	return func(ld *Loaded, err error) (*Loaded, error) {
		if err != nil {
			return nil, err
		}
		return &Loaded{Module: ld.Module, Revision: ld.Revision, Moving: moving}, nil
	}
}

// resolve returns what key (a branch, tag or OCI tag with its credentials) resolved to
// within the refresh interval, or looks it up again.
func (l *Loader) resolve(key string, lookup func() (string, error)) (string, error) {
	l.mu.Lock()
	r, ok := l.refs[key]
	l.mu.Unlock()
	if ok && time.Since(r.at) < l.RefreshPeriod() {
		return r.revision, nil
	}
	v, err, _ := l.flight.Do("resolve/"+key, func() (any, error) {
		rev, err := lookup()
		if err != nil {
			return "", err
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.refs == nil {
			l.refs = map[string]resolved{}
		}
		l.refs[key] = resolved{revision: rev, at: time.Now()}
		return rev, nil
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// secret reads the Secret a source's secretRef names; nil without one. Its identity
// (namespace/name@resourceVersion) keys the caches, so a module fetched with one set of
// credentials is never handed to a source with another, and a changed Secret is used
// at once.
func secret(ctx context.Context, c client.Reader, namespace string, ref *common.LocalReference) (*corev1.Secret, string, error) {
	if ref == nil {
		return nil, "", nil
	}
	s := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", resource.UserErrorf(ReasonSecretNotFound, "Secret %s/%s named by the source's secretRef does not exist", namespace, ref.Name)
		}
		return nil, "", err
	}
	return s, namespace + "/" + ref.Name + "@" + s.ResourceVersion, nil
}
