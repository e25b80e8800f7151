package module

import (
	"fmt"
	"io"
	"maps"
	"slices"
)

// WriteFiles writes files to h in name order, each as its name, its length and its
// content, so that a hash of what was written changes with any file's name or content;
// keep, when not nil, picks the files written.
func WriteFiles(h io.Writer, files map[string][]byte, keep func(name string) bool) {
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if keep != nil && !keep(name) {
			continue
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(files[name]))
		h.Write(files[name])
	}
}
