package modsource

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/archive"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
)

// TarballKey is the binaryData key of a ConfigMap that holds a whole module tree (with
// subdirectories) as a gzipped tar.
const TarballKey = "module.tar.gz"

func (l *Loader) fromConfigMap(ctx context.Context, c client.Reader, namespace, name string) (*Loaded, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, resource.UserErrorf(ReasonNotFound, "ConfigMap %s/%s holding the module does not exist", namespace, name)
		}
		return nil, fmt.Errorf("get module configmap: %w", err)
	}
	key := "configmap/" + string(cm.UID) + "/" + cm.ResourceVersion
	return l.load(key, func() (*Loaded, error) {
		files, err := configMapFiles(cm)
		if err == nil {
			var m *module.Module
			if m, err = module.FromFiles(files); err == nil {
				return &Loaded{Module: m, Revision: cm.ResourceVersion}, nil
			}
		}
		return nil, resource.UserErrorf(ReasonInvalidModule, "module in ConfigMap %s/%s: %v", namespace, name, err)
	})
}

// configMapFiles are a ConfigMap's keys as files, or the tree its TarballKey holds.
func configMapFiles(cm *corev1.ConfigMap) (map[string][]byte, error) {
	if tgz, ok := cm.BinaryData[TarballKey]; ok {
		if len(cm.BinaryData)+len(cm.Data) > 1 {
			return nil, fmt.Errorf("it holds %s and other keys; hold either one file per key or only %s", TarballKey, TarballKey)
		}
		return ReadTarball(tgz)
	}
	files := map[string][]byte{}
	for k, v := range cm.Data {
		files[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		files[k] = v
	}
	return files, nil
}

// ReadTarball reads a gzipped tar of a module with the archive rules and module limits.
func ReadTarball(tgz []byte) (map[string][]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", TarballKey, err)
	}
	defer zr.Close()
	files, err := archive.Read(zr, moduleLimits)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", TarballKey, err)
	}
	return files, nil
}

// WriteTarball is the gzipped, reproducible tar of files that ReadTarball reads.
func WriteTarball(files map[string][]byte) ([]byte, error) {
	raw, err := archive.Write(files)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
