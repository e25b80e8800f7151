package supplychain

import (
	"sort"
	"strings"
	"time"
)

// BuildType is the SLSA build type of `make release`: its external parameters are the
// command, the source and the release's version and options.
const BuildType = "https://terraplane.io/release/make-release/v1"

// Provenance is an SLSA v1 provenance predicate.
type Provenance struct {
	BuildDefinition BuildDefinition `json:"buildDefinition"`
	RunDetails      RunDetails      `json:"runDetails"`
}

// BuildDefinition says what was built, from what, how.
type BuildDefinition struct {
	BuildType            string               `json:"buildType"`
	ExternalParameters   map[string]any       `json:"externalParameters"`
	InternalParameters   map[string]any       `json:"internalParameters,omitempty"`
	ResolvedDependencies []ResourceDescriptor `json:"resolvedDependencies"`
}

// ResourceDescriptor is a material of the build.
type ResourceDescriptor struct {
	Name        string            `json:"name,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Digest      map[string]string `json:"digest,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// RunDetails say who built it, when.
type RunDetails struct {
	Builder  Builder  `json:"builder"`
	Metadata Metadata `json:"metadata"`
}

// Builder is the build platform.
type Builder struct {
	ID string `json:"id"`
}

// Metadata is the run's.
type Metadata struct {
	InvocationID string `json:"invocationId,omitempty"`
	StartedOn    string `json:"startedOn,omitempty"`
	FinishedOn   string `json:"finishedOn,omitempty"`
}

// Build describes a run of `make release`.
type Build struct {
	// Command is the build command, as it was run.
	Command string
	// Source is the repository's address, Revision the commit built.
	Source, Revision string
	// Builder identifies what ran the build (a URI).
	Builder string
	// Parameters are the release's options: version, registry, platforms, terraform, providers.
	Parameters map[string]any
	// Started and Finished bound the build.
	Started, Finished time.Time
}

// NewProvenance is the provenance of b, whose images bundle contents: the source at its
// revision, the Go toolchain and modules of the terraplane binaries, and the terraform
// and provider binaries by checksum.
func NewProvenance(b Build, contents ...Contents) Provenance {
	ext := map[string]any{"command": b.Command, "source": map[string]string{"uri": b.Source, "revision": b.Revision}}
	for k, v := range b.Parameters {
		ext[k] = v
	}
	return Provenance{
		BuildDefinition: BuildDefinition{
			BuildType:            BuildType,
			ExternalParameters:   ext,
			ResolvedDependencies: materials(b, contents),
		},
		RunDetails: RunDetails{
			Builder:  Builder{ID: b.Builder},
			Metadata: Metadata{StartedOn: rfc3339(b.Started), FinishedOn: rfc3339(b.Finished)},
		},
	}
}

// materials are the source, the Go toolchain, the Go modules (once, sorted) and the
// bundled binaries of every platform.
func materials(b Build, contents []Contents) []ResourceDescriptor {
	var out []ResourceDescriptor
	if b.Revision != "" {
		out = append(out, ResourceDescriptor{Name: "source", URI: gitURI(b.Source, b.Revision), Digest: map[string]string{"gitCommit": b.Revision}})
	}
	modules := map[string]ResourceDescriptor{}
	for _, c := range contents {
		bi := c.Terraplane.Build
		if bi == nil {
			continue
		}
		modules["go"] = ResourceDescriptor{Name: "go", URI: "pkg:golang/stdlib@" + strings.TrimPrefix(bi.GoVersion, "go")}
		for _, m := range bi.Deps {
			if m.Replace != nil {
				m = m.Replace
			}
			d := ResourceDescriptor{Name: m.Path, URI: "pkg:golang/" + m.Path + "@" + m.Version}
			if m.Sum != "" {
				d.Annotations = map[string]string{"go.sum": m.Sum}
			}
			modules[d.URI] = d
		}
	}
	out = append(out, sorted(modules)...)
	for _, c := range contents {
		out = append(out, binaries(c)...)
	}
	return out
}

// binaries are the terraform and provider binaries of one platform's image.
func binaries(c Contents) []ResourceDescriptor {
	var out []ResourceDescriptor
	if t := c.Terraform; t.Name != "" {
		out = append(out, ResourceDescriptor{Name: t.Name + " " + orNoAssertion(t.Version) + " " + c.Platform,
			Digest: map[string]string{"sha256": t.SHA256}, Annotations: map[string]string{"path": t.Path}})
	}
	for _, p := range c.Providers {
		out = append(out, ResourceDescriptor{Name: p.Source + " " + p.Version + " " + c.Platform,
			Digest: map[string]string{"sha256": p.SHA256}, Annotations: map[string]string{"path": p.Path}})
	}
	return out
}

func sorted(m map[string]ResourceDescriptor) []ResourceDescriptor {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]ResourceDescriptor, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// gitURI is the SPDX-style VCS locator of the source at revision.
func gitURI(source, revision string) string {
	if source == "" {
		return "git+unknown@" + revision
	}
	if !strings.HasPrefix(source, "git+") {
		source = "git+" + source
	}
	return source + "@" + revision
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
