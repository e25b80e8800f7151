package plugins

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestTrimSchema: the resource, data source and ephemeral resource maps keep only the
// wanted types; every other field passes unchanged.
func TestTrimSchema(t *testing.T) {
	entry := func(num protowire.Number, name string) []byte {
		var e []byte
		e = protowire.AppendTag(e, 1, protowire.BytesType)
		e = protowire.AppendString(e, name)
		e = protowire.AppendTag(e, 2, protowire.BytesType)
		e = protowire.AppendBytes(e, []byte("schema of "+name))
		b := protowire.AppendTag(nil, num, protowire.BytesType)
		return protowire.AppendBytes(b, e)
	}
	var in, want []byte
	provider := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("provider schema"))
	function := entry(7, "parse_arn")
	for _, f := range [][]byte{provider, entry(2, "aws_s3_bucket"), entry(2, "aws_instance"), entry(3, "aws_caller_identity"),
		entry(3, "aws_ami"), entry(8, "aws_secretsmanager_secret_version"), function} {
		in = append(in, f...)
	}
	for _, f := range [][]byte{provider, entry(2, "aws_s3_bucket"), entry(3, "aws_caller_identity"), function} {
		want = append(want, f...)
	}
	got, err := trimSchema(in, map[string]bool{"aws_s3_bucket": true, "aws_caller_identity": true, "parse_arn": false})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("trimmed answer differs:\n got %q\nwant %q", got, want)
	}
	if _, err := trimSchema([]byte{0xff}, nil); err == nil {
		t.Error("a malformed answer was trimmed without error")
	}
}
