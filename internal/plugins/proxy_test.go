package plugins

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestHasField(t *testing.T) {
	var msg []byte
	msg = protowire.AppendTag(msg, 1, protowire.BytesType)
	msg = protowire.AppendBytes(msg, []byte("prepared config"))
	if hasField(msg, 2) {
		t.Error("an answer without diagnostics reads as having them: it would never be cached")
	}
	withDiag := protowire.AppendTag(append([]byte(nil), msg...), 2, protowire.BytesType)
	withDiag = protowire.AppendBytes(withDiag, []byte("diagnostic"))
	if !hasField(withDiag, 2) {
		t.Error("an answer with diagnostics reads as clean: a problem would be replayed from the cache")
	}
	if !hasField([]byte{0xff}, 2) {
		t.Error("an unreadable answer must count as having diagnostics")
	}
	if hasField(nil, 4) {
		t.Error("an empty answer has no diagnostics")
	}
}
