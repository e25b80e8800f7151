package module

import (
	"strings"
	"testing"
)

// TestInspectFilesParsesEachModuleOnce: the same files give the same parse without
// parsing again, an edit gives a new parse, and a refused module stays refused.
func TestInspectFilesParsesEachModuleOnce(t *testing.T) {
	files := map[string][]byte{"main.tf": []byte(`variable "name" {}` + "\n")}
	first, err := inspectFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	again, err := inspectFiles(map[string][]byte{"main.tf": []byte(`variable "name" {}` + "\n")})
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Error("the same files were parsed again")
	}
	edited, err := inspectFiles(map[string][]byte{"main.tf": []byte(`variable "size" {}` + "\n")})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := edited.Variables["size"]; !ok || edited == first {
		t.Errorf("an edited module kept its old parse: variables %v", edited.Variables)
	}
	for range 2 {
		if _, err := inspectFiles(map[string][]byte{"main.tf": []byte(`variable {`)}); err == nil || !strings.Contains(err.Error(), "parse module") {
			t.Errorf("a broken module: err = %v, want a parse error", err)
		}
	}
}

// TestFilesDigestTellsSetsApart: moving bytes between a name and its content, or
// between two files, makes another digest.
func TestFilesDigestTellsSetsApart(t *testing.T) {
	sets := []map[string][]byte{
		{"a.tf": []byte("bc")},
		{"a.tfb": []byte("c")},
		{"a.tf": []byte("b"), "c.tf": nil},
		{"a.tf": []byte("bc"), "c.tf": nil},
		{},
	}
	seen := map[[32]byte]int{}
	for i, s := range sets {
		d := filesDigest(s)
		if j, dup := seen[d]; dup {
			t.Errorf("sets %d and %d share a digest", j, i)
		}
		seen[d] = i
	}
}
