package main

import (
	"fmt"
	"net"
	"regexp"
	"strings"
)

// semverTag is a version tag as git describe prints it: v1.2.3, with what follows a tag.
var semverTag = regexp.MustCompile(`^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$`)

// notIdentifier is what a SemVer pre-release identifier may not hold.
var notIdentifier = regexp.MustCompile(`[^0-9A-Za-z-]+`)

// ChartVersion is the chart version (SemVer, as Helm requires) of a git describe
// version: a tag's own (v0.2.0-3-gabcdef0 gives 0.2.0-3-gabcdef0), else 0.0.0 with the
// describe output as its pre-release, prefixed g as git prefixes commits (so that a
// commit of digits alone stays a valid identifier): a15e128-dirty gives 0.0.0-ga15e128-dirty.
func ChartVersion(version string) string {
	if m := semverTag.FindStringSubmatch(version); m != nil {
		return m[1]
	}
	return "0.0.0-g" + strings.Trim(notIdentifier.ReplaceAllString(version, "-"), "-")
}

// repositoryLine is the image repository in the chart's values.yaml.
var repositoryLine = regexp.MustCompile(`(?m)^(image:\n(?:[ \t]*#.*\n)*[ \t]+repository:)[ \t]*\S+[ \t]*$`)

// SetImageRepository sets image.repository in the chart's values.yaml to repo, keeping
// the file as it is otherwise; it fails when it cannot find that line.
func SetImageRepository(values []byte, repo string) ([]byte, error) {
	if !repositoryLine.Match(values) {
		return nil, fmt.Errorf("values.yaml has no image.repository line right under the image key")
	}
	return repositoryLine.ReplaceAll(values, []byte("${1} "+escapeDollar(repo))), nil
}

func escapeDollar(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// PlainHTTP says whether the registry (host[:port]/path) is on loopback, where registries
// serve plain HTTP, as go-containerregistry assumes for the image.
func PlainHTTP(registry string) bool {
	host := strings.SplitN(registry, "/", 2)[0]
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
