package terraform

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/resource"
)

// maxStateBytes bounds the state read to count its resources.
const maxStateBytes = 64 << 20

// stateResources counts the managed resource instances in mg's Terraform state, read
// from the Secret the kubernetes backend keeps it in (no terraform runs); found is false
// when there is no state yet.
func (e *run) stateResources(ctx context.Context) (n int, found bool, err error) {
	mg, s := e.mg, &corev1.Secret{}
	err = e.t.reader.Get(ctx, client.ObjectKey{Namespace: mg.GetNamespace(), Name: resource.StateSecretName(mg)}, s)
	if apierrors.IsNotFound(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read state: %w", err)
	}
	n, err = countStateResources(s.Data["tfstate"])
	return n, true, err
}

// countStateResources counts the managed resource instances (data sources left out) in
// a state as the kubernetes backend stores it: gzipped JSON, or plain JSON.
func countStateResources(raw []byte) (int, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return 0, nil
	}
	if bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return 0, fmt.Errorf("read state: %w", err)
		}
		if raw, err = io.ReadAll(io.LimitReader(zr, maxStateBytes)); err != nil {
			return 0, fmt.Errorf("read state: %w", err)
		}
	}
	var st struct {
		Resources []struct {
			Mode      string            `json:"mode"`
			Instances []json.RawMessage `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return 0, fmt.Errorf("read state: %w", err)
	}
	n := 0
	for _, res := range st.Resources {
		if res.Mode == "managed" {
			n += len(res.Instances)
		}
	}
	return n, nil
}
