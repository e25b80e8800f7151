package engineflags

import (
	"fmt"
	"strconv"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/plugins"
)

// Bind binds the engine settings the controller and the runner share to fs, into o, with
// their defaults.
func Bind(fs *pflag.FlagSet, o *engine.Options) {
	fs.StringVar(&o.PluginMirror, "plugin-mirror", engine.DefaultPluginMirror(), "filesystem mirror of Terraform providers")
	fs.StringVar(&o.TerraformPath, "terraform", "", "terraform or OpenTofu binary, a path or a name on PATH such as tofu (default: terraform)")
	fs.StringVar(&o.NetworkMirror, "provider-mirror-url", "", "Terraform provider network mirror (static-file protocol), e.g. https://mirror.example.internal/providers/")
	fs.BoolVar(&o.AllowDirect, "provider-download", false, "let terraform download providers from their registries")
	fs.StringVar(&o.ModuleRegistryURL, "module-registry-url", "", "module registry (terraform's modules.v1 protocol, e.g. a mirror) serving the modules that modules call by public registry address (source = \"org/name/system\"), e.g. https://modules.example.internal/v1/modules/ (default: the public registry)")
	fs.StringVar(&o.PluginCacheDir, "plugin-cache-dir", "", "cache shared by all workspaces for providers from a network mirror or registry (default <workdir>/.plugin-cache)")
	fs.IntVar(&o.MaxConcurrent, "max-concurrent-terraform", 0, "cap on terraform processes running at once (default: from the container's CPU quota and memory limit)")
	fs.DurationVar(&o.Timeout, "terraform-timeout", engine.DefaultTimeout, "deadline of each terraform command (a resource's or class's spec.timeout overrides it)")
	fs.BoolVar(&o.ProviderReuse, "provider-reuse", true, "keep provider processes warm between terraform runs, keyed by binary, environment and provider configuration (terraform's reattach protocol)")
	fs.DurationVar(&o.ProviderTTL, "provider-ttl", plugins.DefaultTTL, "how long a reused provider process lives before it is replaced")
	fs.IntVar(&o.ProviderRunsPerProcess, "provider-runs-per-process", plugins.DefaultRunsPerProcess, "how many terraform runs of one provider configuration a reused provider process serves at once (1: one at a time)")
	fs.Var(Bytes(&o.ProviderMemoryBudget), "provider-memory-budget", "cap on the resident memory of warm provider processes (of each runner pool, or of the controller with --runner in-process), e.g. 2Gi; idle ones are stopped past it, the least recently used first (default: half the memory limit of the controller's container, and of each runner Deployment's pod; none without a limit)")
}

// Args are the arguments that give a runner the settings of o that Bind binds, but for
// the paths of the controller's own machine (its binary, mirror and cache): a runner has
// its own.
func Args(o engine.Options) []string {
	args := []string{"--provider-reuse=" + strconv.FormatBool(o.ProviderReuse)}
	add := func(flag, value string) {
		if value != "" && value != "0" && value != "0s" {
			args = append(args, flag, value)
		}
	}
	add("--provider-mirror-url", o.NetworkMirror)
	add("--module-registry-url", o.ModuleRegistryURL)
	add("--max-concurrent-terraform", strconv.Itoa(o.MaxConcurrent))
	add("--provider-ttl", o.ProviderTTL.String())
	add("--terraform-timeout", o.Timeout.String())
	add("--provider-runs-per-process", strconv.Itoa(o.ProviderRunsPerProcess))
	if o.ProviderMemoryBudget > 0 {
		args = append(args, "--provider-memory-budget", strconv.FormatInt(o.ProviderMemoryBudget, 10))
	}
	if o.AllowDirect {
		args = append(args, "--provider-download")
	}
	return args
}

// Bytes is a flag of a size in bytes written as a quantity such as 100Mi, into p.
func Bytes(p *int64) pflag.Value { return byteSize{p} }

// byteSize is a flag of a size in bytes, written as a quantity such as 100Mi.
type byteSize struct{ p *int64 }

// String is the size as a quantity.
func (b byteSize) String() string {
	if b.p == nil {
		return ""
	}
	return resource.NewQuantity(*b.p, resource.BinarySI).String()
}

// Set reads a positive quantity.
func (b byteSize) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return err
	}
	if q.Sign() <= 0 {
		return fmt.Errorf("%s is not a positive size", s)
	}
	*b.p = q.Value()
	return nil
}

// Type names the flag's kind of value in the help.
func (b byteSize) Type() string { return "quantity" }
