package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"terraplane.io/terraplane/tfmodules"
)

// step is one terraform command of the single workspace: its wall time, its CPU (the
// providers' included) and the peak resident set of terraform and its providers together.
type step struct {
	wall, cpu time.Duration
	rss       float64 // MiB
}

// singleResult is the best a Terraform user does by hand: one root module that calls the
// variant's module N times with for_each, one init, one provider process per provider.
type singleResult struct {
	ran                        bool
	init, apply, plan, destroy step
	cpCPU                      time.Duration // kube-apiserver and etcd, over init and apply
}

// applied is the wall time until all N exist: init and apply, as a pipeline runs them.
func (s singleResult) applied() time.Duration { return s.init.wall + s.apply.wall }

// runSingle writes the single workspace for n instances of the variant's module and
// runs init, apply, a no-op plan and destroy in it, each with -parallelism.
func (h *harness) runSingle(ctx context.Context, variant string, n, parallelism int) (singleResult, error) {
	cfg, err := h.cliConfig()
	if err != nil {
		return singleResult{}, err
	}
	flat := strings.NewReplacer("_", "", "-", "").Replace(variant)
	dir := filepath.Join(h.work, "single", fmt.Sprintf("%s-%d", variant, n))
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("one%s%dn%d", flat, n, i)
	}
	env, err := h.singleFiles(dir, cfg, variant, fmt.Sprintf("single%sn%d", flat, n), names)
	if err != nil {
		return singleResult{}, err
	}
	w := rawDir{dir: dir, env: env}
	par := fmt.Sprintf("-parallelism=%d", parallelism)
	res := singleResult{ran: true}
	cp0 := controlPlaneCPU()
	for _, s := range []struct {
		into *step
		args []string
	}{
		{&res.init, []string{"init", "-input=false"}},
		{&res.apply, []string{"apply", "-auto-approve", "-input=false", par}},
		{&res.plan, []string{"plan", "-input=false", "-detailed-exitcode", par}},
		{&res.destroy, []string{"destroy", "-auto-approve", "-input=false", par}},
	} {
		if s.into == &res.plan {
			res.cpCPU = controlPlaneCPU() - cp0
		}
		if *s.into, err = timeStep(ctx, w, s.args...); err != nil {
			return singleResult{}, err
		}
	}
	return res, nil
}

// timeStep runs one terraform command in w and measures it.
func timeStep(ctx context.Context, w rawDir, args ...string) (step, error) {
	tree := sampleTree(rawTree(nil))
	start := time.Now()
	cpu, err := runTerraform(ctx, w, args...)
	wall := time.Since(start)
	return step{wall: wall, cpu: cpu, rss: tree.done()}, err
}

// singleFiles writes the single workspace: the variant's module in ./mod, called once
// per name with for_each; for aws-s3 the provider configured as the raw side's is. It
// returns the environment terraform needs beyond the CLI configuration.
func (h *harness) singleFiles(dir, cfg, variant, suffix string, names []string) ([]string, error) {
	mod := filepath.Join(dir, "mod")
	if err := os.MkdirAll(mod, 0o700); err != nil {
		return nil, err
	}
	call := map[string]any{"source": "./mod", "for_each": "${var.names}"}
	root := map[string]any{
		"terraform": map[string]any{"backend": map[string]any{"kubernetes": map[string]any{
			"secret_suffix": suffix, "namespace": rawNS, "config_path": h.cp.Kubeconfig}}},
		"variable": map[string]any{"names": map[string]any{"type": "set(string)"}},
		"module":   map[string]any{"this": call},
	}
	env := []string{"TF_CLI_CONFIG_FILE=" + cfg, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1"}
	if variant == awsVariant {
		sub, err := fs.Sub(tfmodules.FS, "aws/s3bucket")
		if err != nil {
			return nil, err
		}
		if err := os.CopyFS(mod, sub); err != nil && !os.IsExist(err) {
			return nil, fmt.Errorf("copy the s3bucket module: %w", err)
		}
		root["provider"] = h.awsProvider()
		call["bucket_name"], call["force_destroy"], call["endpoint_url"] = "${each.key}", true, h.minio.Endpoint
		env = append(env, "AWS_ACCESS_KEY_ID="+minioUser, "AWS_SECRET_ACCESS_KEY="+minioPassword)
	} else {
		if err := os.WriteFile(filepath.Join(mod, "main.tf"), []byte(modules[variant]), 0o600); err != nil {
			return nil, err
		}
		call["name"] = "${each.key}"
	}
	main, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	vars, err := json.Marshal(map[string]any{"names": names})
	if err != nil {
		return nil, err
	}
	for name, content := range map[string][]byte{"main.tf.json": main, "terraform.tfvars.json": vars} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			return nil, err
		}
	}
	return env, nil
}
