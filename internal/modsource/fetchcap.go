package modsource

import (
	"errors"
	"io"
	"sync/atomic"

	"github.com/go-git/go-git/v5/storage/filesystem"
	"k8s.io/apimachinery/pkg/api/resource"
)

// errFetchTooLarge stops a fetch whose packs pass the limit.
var errFetchTooLarge = errors.New("the fetch is over its size limit")

// cappedStorage is a git object store that takes packs of at most limit bytes in all.
type cappedStorage struct {
	*filesystem.Storage
	limit   int64
	written atomic.Int64
}

// PackfileWriter is the store's, stopped with errFetchTooLarge past the limit.
func (s *cappedStorage) PackfileWriter() (io.WriteCloser, error) {
	w, err := s.Storage.PackfileWriter()
	if err != nil {
		return nil, err
	}
	return &cappedWriter{WriteCloser: w, s: s}, nil
}

// over reports whether a fetch into the store passed the limit.
func (s *cappedStorage) over() bool { return s.written.Load() > s.limit }

// cappedWriter counts what it writes against its store's limit.
type cappedWriter struct {
	io.WriteCloser
	s *cappedStorage
}

// Write writes p unless it takes the store past its limit.
func (w *cappedWriter) Write(p []byte) (int, error) {
	if w.s.written.Add(int64(len(p))) > w.s.limit {
		return 0, errFetchTooLarge
	}
	return w.WriteCloser.Write(p)
}

// maxFetch is the cap of one git fetch.
func (l *Loader) maxFetch() int64 {
	if l.MaxFetchBytes > 0 {
		return l.MaxFetchBytes
	}
	return DefaultMaxFetchBytes
}

// size shows a byte count as a quantity, as --module-source-max-fetch takes it.
func size(n int64) string { return resource.NewQuantity(n, resource.BinarySI).String() }
