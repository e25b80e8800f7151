package supplychain

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"terraplane.io/terraplane/internal/image"
)

// SPDX values the SBOM uses.
const (
	spdxVersion    = "SPDX-2.3"
	noAssertion    = "NOASSERTION"
	goLicence      = "BSD-3-Clause"
	documentPrefix = "https://terraplane.io/spdx/"
)

// Document is an SPDX 2.3 document (JSON), the fields this SBOM fills.
type Document struct {
	SPDXVersion       string         `json:"spdxVersion"`
	DataLicense       string         `json:"dataLicense"`
	SPDXID            string         `json:"SPDXID"`
	Name              string         `json:"name"`
	DocumentNamespace string         `json:"documentNamespace"`
	CreationInfo      CreationInfo   `json:"creationInfo"`
	Packages          []Package      `json:"packages"`
	Relationships     []Relationship `json:"relationships"`
}

// CreationInfo says when and by what the document was made.
type CreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

// Package is an SPDX package: the image, a binary, a Go module, a provider.
type Package struct {
	SPDXID                string        `json:"SPDXID"`
	Name                  string        `json:"name"`
	VersionInfo           string        `json:"versionInfo,omitempty"`
	Supplier              string        `json:"supplier,omitempty"`
	DownloadLocation      string        `json:"downloadLocation"`
	FilesAnalyzed         bool          `json:"filesAnalyzed"`
	Checksums             []Checksum    `json:"checksums,omitempty"`
	LicenseConcluded      string        `json:"licenseConcluded"`
	LicenseDeclared       string        `json:"licenseDeclared"`
	CopyrightText         string        `json:"copyrightText"`
	PrimaryPackagePurpose string        `json:"primaryPackagePurpose,omitempty"`
	ExternalRefs          []ExternalRef `json:"externalRefs,omitempty"`
	Comment               string        `json:"comment,omitempty"`
}

// Checksum is a package's checksum.
type Checksum struct {
	Algorithm     string `json:"algorithm"`
	ChecksumValue string `json:"checksumValue"`
}

// ExternalRef is a package's reference elsewhere: its package URL.
type ExternalRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

// Relationship relates two elements of the document.
type Relationship struct {
	SPDXElementID      string `json:"spdxElementId"`
	RelationshipType   string `json:"relationshipType"`
	RelatedSPDXElement string `json:"relatedSpdxElement"`
}

// ImageRef names the image an SBOM describes: its repository and manifest digest.
type ImageRef struct {
	Repository, Digest string
}

// SBOM is the SPDX document of an image: the image, containing terraplane (depending on
// the Go standard library and the modules of its build info), the terraform binary and
// the providers. created is the document's creation time.
func SBOM(c Contents, img ImageRef, created time.Time) Document {
	d := Document{
		SPDXVersion: spdxVersion, DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT",
		Name:              "terraplane-" + c.Terraplane.Version + "-" + strings.ReplaceAll(c.Platform, "/", "-"),
		DocumentNamespace: documentPrefix + strings.TrimPrefix(img.Digest, "sha256:"),
		CreationInfo: CreationInfo{Created: created.UTC().Format(time.RFC3339),
			Creators: []string{"Organization: Terraplane", "Tool: terraplane-release-" + c.Terraplane.Version}},
	}
	ids := idSet{}
	root := d.add(ids, imagePackage(c, img))
	bin := d.add(ids, terraplanePackage(c.Terraplane))
	d.relate(d.SPDXID, "DESCRIBES", root)
	d.relate(root, "CONTAINS", bin)
	if c.Terraform.Name != "" {
		d.relate(root, "CONTAINS", d.add(ids, terraformPackage(c.Terraform)))
	}
	for _, p := range c.Providers {
		d.relate(root, "CONTAINS", d.add(ids, providerPackage(p)))
	}
	bi := c.Terraplane.Build
	d.relate(bin, "DEPENDS_ON", d.add(ids, goPackage("stdlib", strings.TrimPrefix(bi.GoVersion, "go"), goLicence, "")))
	for _, m := range bi.Deps {
		if m.Replace != nil {
			m = m.Replace
		}
		d.relate(bin, "DEPENDS_ON", d.add(ids, goPackage(m.Path, m.Version, noAssertion, m.Sum)))
	}
	return d
}

// add appends p with an SPDX ID unique in the document, and returns that ID.
func (d *Document) add(ids idSet, p Package) string {
	p.SPDXID = ids.unique(p.SPDXID)
	d.Packages = append(d.Packages, p)
	return p.SPDXID
}

func (d *Document) relate(from, typ, to string) {
	d.Relationships = append(d.Relationships, Relationship{SPDXElementID: from, RelationshipType: typ, RelatedSPDXElement: to})
}

func imagePackage(c Contents, img ImageRef) Package {
	arch := c.Platform[strings.LastIndex(c.Platform, "/")+1:]
	p := pkg("Image-terraplane", img.Repository, c.Terraplane.Version, orNoAssertion(c.Licences), "CONTAINER")
	p.Checksums = []Checksum{{"SHA256", strings.TrimPrefix(img.Digest, "sha256:")}}
	p.ExternalRefs = []ExternalRef{purl(fmt.Sprintf("pkg:oci/terraplane@%s?arch=%s&repository_url=%s", escapeDigest(img.Digest), arch, img.Repository))}
	return p
}

func terraplanePackage(b Binary) Package {
	p := pkg("Package-terraplane", "terraplane", b.Version, "Apache-2.0", "APPLICATION")
	p.Checksums = []Checksum{{"SHA256", b.SHA256}}
	p.ExternalRefs = []ExternalRef{purl("pkg:golang/" + b.Build.Main.Path + "@" + b.Version)}
	p.Comment = b.Path + ", built with " + b.Build.GoVersion
	return p
}

func terraformPackage(b Binary) Package {
	licence := image.TerraformLicence(b.Name)
	if licence == "" {
		licence = noAssertion
	}
	p := pkg("Package-"+b.Name, b.Name, b.Version, licence, "APPLICATION")
	p.Checksums = []Checksum{{"SHA256", b.SHA256}}
	if b.Build != nil && b.Version != "" {
		p.ExternalRefs = []ExternalRef{purl("pkg:golang/" + mainModule(b.Build) + "@" + b.Version)}
	}
	p.Comment = b.Path
	return p
}

func providerPackage(p Provider) Package {
	out := pkg("Package-provider-"+p.Namespace+"-"+p.Type, p.Source, p.Version, image.ProviderLicence(p.Namespace, p.Type), "APPLICATION")
	if strings.HasPrefix(out.LicenseDeclared, "LicenseRef-") {
		out.LicenseDeclared, out.LicenseConcluded = noAssertion, noAssertion
	}
	out.Checksums = []Checksum{{"SHA256", p.SHA256}}
	out.Comment = p.Path
	return out
}

func goPackage(modPath, version, licence, sum string) Package {
	p := pkg("Package-go-"+modPath, modPath, version, licence, "LIBRARY")
	p.ExternalRefs = []ExternalRef{purl("pkg:golang/" + modPath + "@" + version)}
	if sum != "" {
		p.Comment = "go.sum " + sum
	}
	return p
}

func pkg(id, name, version, licence, purpose string) Package {
	if version == "" {
		version = noAssertion
	}
	return Package{SPDXID: "SPDXRef-" + id, Name: name, VersionInfo: version, DownloadLocation: noAssertion,
		LicenseConcluded: licence, LicenseDeclared: licence, CopyrightText: noAssertion, PrimaryPackagePurpose: purpose}
}

func orNoAssertion(s string) string {
	if s == "" {
		return noAssertion
	}
	return s
}

func purl(locator string) ExternalRef {
	return ExternalRef{ReferenceCategory: "PACKAGE-MANAGER", ReferenceType: "purl", ReferenceLocator: locator}
}

func escapeDigest(d string) string { return strings.ReplaceAll(d, ":", "%3A") }

// mainModule is the module a binary's main package comes from (see moduleVersion).
func mainModule(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return bi.Main.Path
	}
	for _, d := range bi.Deps {
		if bi.Path == d.Path || strings.HasPrefix(bi.Path, d.Path+"/") {
			return d.Path
		}
	}
	return bi.Main.Path
}

// notIDChars are what an SPDX ID may not hold.
var notIDChars = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// idSet makes SPDX IDs valid and unique in a document.
type idSet map[string]bool

func (s idSet) unique(id string) string {
	id = "SPDXRef-" + notIDChars.ReplaceAllString(strings.TrimPrefix(id, "SPDXRef-"), "-")
	out := id
	for i := 2; s[out]; i++ {
		out = fmt.Sprintf("%s-%d", id, i)
	}
	s[out] = true
	return out
}
