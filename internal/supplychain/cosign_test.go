package supplychain

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore/pkg/signature"

	"terraplane.io/terraplane/internal/devenv"
)

// TestCosignReadsWhatWeWrite: the cosign CLI, as a user's security team runs it, verifies
// what SignManifest and Attest attach with the public key (and not with another), and
// downloads the SBOM AttachSBOM attaches.
func TestCosignReadsWhatWeWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the cosign CLI")
	}
	cosign := filepath.Join(devenv.BinDir(), "cosign")
	if _, err := os.Stat(cosign); err != nil {
		t.Fatalf("cosign is not installed in %s: run `make tools-test`", devenv.BinDir())
	}
	ref := pushed(t)
	sv, other := newSigner(t), newSigner(t)
	if err := SignManifest(sv, ref); err != nil {
		t.Fatal(err)
	}
	doc := Document{SPDXVersion: spdxVersion, Name: "test", Packages: []Package{{SPDXID: "SPDXRef-Package-x", Name: "x"}}}
	if err := AttachSBOM(doc, ref); err != nil {
		t.Fatal(err)
	}
	digest := mustHash(t, ref.DigestStr())
	var statements []Statement
	for typ, predicate := range map[string]any{SLSAProvenanceType: NewProvenance(Build{Command: "make release", Builder: "test://builder"}), SPDXPredicateType: doc} {
		st, err := NewStatement(typ, predicate, SubjectOf(ref.Context().Name(), digest))
		if err != nil {
			t.Fatal(err)
		}
		statements = append(statements, st)
	}
	if err := Attest(sv, ref, statements); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key, otherKey := filepath.Join(dir, "cosign.pub"), filepath.Join(dir, "other.pub")
	for path, signer := range map[string]signature.SignerVerifier{key: sv, otherKey: other} {
		pem, err := PublicKeyPEM(signer)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pem, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(cosign, append(args, "--allow-http-registry")...)              // the registry is on loopback
		cmd.Env = append(os.Environ(), "TUF_ROOT="+filepath.Join(dir, "tuf"), "HOME="+dir) // cosign keeps its trust-root cache here
		out, err := cmd.Output()
		return string(out), err
	}
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"verify", "--key", key, "--insecure-ignore-tlog", ref.String()}, ref.DigestStr()},
		{[]string{"verify-attestation", "--key", key, "--insecure-ignore-tlog", "--type", "slsaprovenance1", ref.String()}, "application/vnd.in-toto+json"},
		{[]string{"verify-attestation", "--key", key, "--insecure-ignore-tlog", "--type", "spdxjson", ref.String()}, "application/vnd.in-toto+json"},
	} {
		if out, err := run(tc.args...); err != nil || !strings.Contains(out, tc.says) {
			t.Errorf("cosign %s: %v\n%s", strings.Join(tc.args, " "), err, out)
		}
	}
	for _, args := range [][]string{
		{"verify", "--key", otherKey, "--insecure-ignore-tlog", ref.String()},
		{"verify-attestation", "--key", otherKey, "--insecure-ignore-tlog", "--type", "spdxjson", ref.String()},
	} {
		if out, err := run(args...); err == nil {
			t.Errorf("cosign %s with another key verifies:\n%s", args[0], out)
		}
	}
	if out, err := run("download", "sbom", ref.String()); err != nil || !strings.Contains(out, `"spdxVersion":"SPDX-2.3"`) {
		t.Errorf("cosign download sbom: %v\n%s", err, out)
	}
}
