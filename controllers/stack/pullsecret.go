package stack

import (
	"context"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"terraplane.io/terraplane/internal/registryauth"
)

// remoteFor returns the registry options of an install: its pull secret first, then the
// manager's docker keychain.
func (r *InstallReconciler) remoteFor(ctx context.Context, in *install) ([]remote.Option, error) {
	name := in.obj.GetInstallSpec().PullSecretName
	if name == "" {
		return r.opts.Remote, nil
	}
	kc, err := registryauth.Keychain(ctx, r.client, in.obj.StackNamespace(), name)
	if err != nil {
		return nil, err
	}
	return append(append([]remote.Option{}, r.opts.Remote...), remote.WithAuthFromKeychain(kc)), nil
}
