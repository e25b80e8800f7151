package modsource

import (
	"context"
	"errors"
	"net/http"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"sigs.k8s.io/controller-runtime/pkg/client"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/archive"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/registryauth"
	"terraplane.io/terraplane/internal/resource"
)

// ociArtifact is one OCI source with the credentials it is pulled with.
type ociArtifact struct {
	src    terraformv1.OCISource
	ref    name.Reference
	opts   []remote.Option
	authID string
	secret string
}

// fromOCI resolves the reference to a digest (pinned, or a tag looked up every refresh
// interval), pulls that artifact once and reads the module at path inside it.
func (l *Loader) fromOCI(ctx context.Context, c client.Reader, namespace string, src terraformv1.OCISource) (*Loaded, error) {
	ref, err := name.ParseReference(src.Ref)
	if err != nil {
		return nil, resource.UserErrorf(ReasonInvalidSource, "OCI reference %q: %v", src.Ref, err)
	}
	if err := l.admit("OCI", src.Ref, "oci://"+src.Ref); err != nil {
		return nil, err
	}
	a := &ociArtifact{src: src, ref: ref}
	s, authID, err := secret(ctx, c, namespace, src.SecretRef)
	if err != nil {
		return nil, err
	}
	var keychain authn.Keychain = authn.DefaultKeychain
	if s != nil {
		a.secret, a.authID = namespace+"/"+s.Name, authID
		kc, err := registryauth.FromSecret(ctx, s)
		if err != nil {
			return nil, resource.UserErrorf(ReasonSecretInvalid, "pull secret %s for %s: %v", a.secret, src.Ref, err)
		}
		keychain = authn.NewMultiKeychain(kc, authn.DefaultKeychain)
	}
	a.opts = []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(keychain)}
	digest, moving := "", false
	if d, ok := ref.(name.Digest); ok {
		digest = d.DigestStr()
	} else {
		moving = true
		digest, err = l.resolve("oci/"+ref.String()+"#"+a.authID, func() (string, error) {
			desc, err := remote.Head(ref, a.opts...)
			if err != nil {
				return "", a.pullError(err)
			}
			return desc.Digest.String(), nil
		})
		if err != nil {
			return nil, err
		}
	}
	dir := strings.Trim(path.Clean("/"+src.Path), "/")
	return l.moving(moving)(l.load("oci/"+ref.Context().Name()+"@"+digest+"//"+dir+"#"+a.authID, func() (*Loaded, error) {
		files, err := a.pull(digest)
		if err != nil {
			return nil, err
		}
		m, err := module.FromTree(files, dir) // a module at dir that calls ../x keeps the artifact's tree
		if err != nil {
			return nil, resource.UserErrorf(ReasonInvalidModule, "module in %s//%s: %v", src.Ref, src.Path, err)
		}
		return &Loaded{Module: m, Revision: digest}, nil
	}))
}

// subtree is the files below dir ("" for all of them), named relative to it.
func subtree(files map[string][]byte, dir string) map[string][]byte {
	sub := map[string][]byte{}
	for name, content := range files {
		if dir == "" {
			sub[name] = content
		} else if rel, ok := strings.CutPrefix(name, dir+"/"); ok {
			sub[rel] = content
		}
	}
	return sub
}

// pull fetches the artifact at digest and unpacks its single layer with the archive rules.
func (a *ociArtifact) pull(digest string) (map[string][]byte, error) {
	img, err := remote.Image(a.ref.Context().Digest(digest), a.opts...)
	if err != nil {
		return nil, a.pullError(err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		return nil, resource.UserErrorf(ReasonInvalidModule, "%s must have exactly one layer (a tar of the module)", a.src.Ref)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		return nil, a.pullError(err)
	}
	defer rc.Close()
	files, err := archive.Read(rc, moduleLimits)
	if err != nil {
		return nil, resource.UserErrorf(ReasonInvalidModule, "module artifact %s: %v", a.src.Ref, err)
	}
	return files, nil
}

// pullError turns a registry error into one line an admin can act on.
func (a *ociArtifact) pullError(err error) error {
	var terr *transport.Error
	if errors.As(err, &terr) {
		switch terr.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			if a.secret == "" {
				return resource.UserErrorf(ReasonAuthFailed, "pull %s: the registry asks for credentials (%s): name a pull secret in secretRef", a.src.Ref, http.StatusText(terr.StatusCode))
			}
			return resource.UserErrorf(ReasonAuthFailed, "pull %s: the registry refused the credentials in pull secret %s (%s)", a.src.Ref, a.secret, http.StatusText(terr.StatusCode))
		case http.StatusNotFound:
			return resource.UserErrorf(ReasonNotFound, "pull %s: not in the registry", a.src.Ref)
		}
	}
	return resource.UserErrorf(ReasonFetchFailed, "pull %s: %v", a.src.Ref, err)
}
