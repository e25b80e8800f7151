package plugins

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
	ctymsgpack "github.com/zclconf/go-cty/cty/msgpack"
	"google.golang.org/protobuf/encoding/protowire"
)

// msg appends fields to a protobuf message: each a field number and a string, []byte
// (nested message), bool or int (varint).
func msg(fields ...any) []byte {
	var b []byte
	for i := 0; i < len(fields); i += 2 {
		num := protowire.Number(fields[i].(int))
		switch v := fields[i+1].(type) {
		case string:
			b = protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), []byte(v))
		case []byte:
			b = protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
		case bool:
			x := uint64(0)
			if v {
				x = 1
			}
			b = protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), x)
		case int:
			b = protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), uint64(v))
		}
	}
	return b
}

// bucketSchema is a schema answer with one resource type: attributes of each kind, a
// sensitive one, a list block with a sensitive attribute and a protocol 6 nested
// attribute; and one data source type with a sensitive attribute.
func bucketSchema() []byte {
	attr := func(name, ty string, sensitive bool) []byte { return msg(1, name, 2, ty, 7, sensitive) }
	rule := msg(2, attr("status", `"string"`, false), 2, attr("key", `"string"`, true))
	nested := msg(1, attr("host", `"string"`, false), 1, attr("token", `"string"`, true), 3, int(nestSingle))
	block := msg(2, attr("bucket", `"string"`, false), 2, attr("id", `"string"`, false), 2, attr("tags", `["map","string"]`, false),
		2, attr("password", `"string"`, true), 2, attr("size", `"number"`, false), 2, msg(1, "endpoint", 10, nested),
		3, msg(1, "rule", 2, rule, 3, int(nestList)))
	res := msg(1, "aws_s3_bucket", 2, msg(1, 0, 2, block))
	ds := msg(1, "aws_secret", 2, msg(2, msg(2, attr("value", `"string"`, true), 2, attr("name", `"string"`, false))))
	return msg(1, msg(2, msg()), 2, res, 3, ds)
}

// TestPlannedCreateValues: a planned value reads as terraform's plan JSON shows it:
// known values, unknown ones marked (and left out), sensitive ones marked by the schema.
func TestPlannedCreateValues(t *testing.T) {
	block, ok, err := typeSchema(bucketSchema(), fieldResources, "aws_s3_bucket")
	if err != nil || !ok {
		t.Fatalf("schema: ok %v, %v", ok, err)
	}
	ty := block.impliedType()
	val := cty.ObjectVal(map[string]cty.Value{
		"bucket":   cty.StringVal("shop"),
		"id":       cty.UnknownVal(cty.String),
		"tags":     cty.MapVal(map[string]cty.Value{"cost-center": cty.StringVal("cc-7")}),
		"password": cty.StringVal("hunter22"),
		"size":     cty.NumberIntVal(3),
		"endpoint": cty.ObjectVal(map[string]cty.Value{"host": cty.StringVal("h"), "token": cty.StringVal("tok-123")}),
		"rule": cty.ListVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{
			"status": cty.StringVal("Enabled"), "key": cty.UnknownVal(cty.String)})}),
	})
	packed, err := ctymsgpack.Marshal(val, ty)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := decodeValue(msg(1, packed), ty)
	if err != nil {
		t.Fatal(err)
	}
	after, unknown := jsonValue(decoded)
	wantAfter := map[string]any{"bucket": "shop", "tags": map[string]any{"cost-center": "cc-7"}, "password": "hunter22", "size": 3.0,
		"endpoint": map[string]any{"host": "h", "token": "tok-123"}, "rule": []any{map[string]any{"status": "Enabled"}}}
	if d := cmp.Diff(wantAfter, after); d != "" {
		t.Errorf("after (-want +got):\n%s", d)
	}
	wantUnknown := map[string]any{"id": true, "tags": map[string]any{}, "endpoint": map[string]any{}, "rule": []any{map[string]any{"key": true}}}
	if d := cmp.Diff(wantUnknown, unknown); d != "" {
		t.Errorf("after_unknown (-want +got):\n%s", d)
	}
	wantSensitive := map[string]any{"password": true, "endpoint": map[string]any{"token": true}, "rule": []any{map[string]any{"key": true}}}
	if d := cmp.Diff(wantSensitive, block.sensitiveMask(decoded)); d != "" {
		t.Errorf("after_sensitive (-want +got):\n%s", d)
	}
	if _, ok, _ := typeSchema(bucketSchema(), fieldResources, "aws_secret"); ok {
		t.Error("a data source type was read as a resource type")
	}
	if _, _, err := typeSchema([]byte{0xff}, fieldResources, "aws_s3_bucket"); err == nil {
		t.Error("a malformed answer was read without error")
	}
}

// TestRunGateVerdict: the check is asked once, with the creates planned before the
// first change; a create planned again while applying is not added; a change the gate
// could not read refuses without asking; every change gets the one verdict.
func TestRunGateVerdict(t *testing.T) {
	var asked [][]PlannedCreate
	var mu sync.Mutex
	g := (&runGate{check: func(_ context.Context, creates []PlannedCreate, secrets []string) error {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, creates)
		if len(secrets) != 1 || secrets[0] != "s3cret-value" {
			t.Errorf("secrets %q", secrets)
		}
		return nil
	}}).forProvider("registry.terraform.io/hashicorp/aws")
	g.record(&PlannedCreate{Type: "aws_s3_bucket"}, nil, nil)
	g.record(nil, []string{"s3cret-value"}, nil)
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			if err := g.decide(context.Background()); err != nil {
				t.Errorf("verdict %v", err)
			}
		})
	}
	wg.Wait()
	g.record(&PlannedCreate{Type: "aws_s3_bucket_versioning"}, nil, nil)
	if len(asked) != 1 || len(asked[0]) != 1 || asked[0][0].Type != "aws_s3_bucket" {
		t.Errorf("check asked %v", asked)
	}

	notCreate := errors.New("a aws_s3_bucket exists already")
	refused := (&runGate{check: func(context.Context, []PlannedCreate, []string) error {
		t.Error("the check was asked about a run with a change that is not a create")
		return nil
	}}).forProvider("p")
	refused.record(nil, nil, notCreate)
	if err := refused.decide(context.Background()); !errors.Is(err, notCreate) {
		t.Errorf("verdict %v, want %v", err, notCreate)
	}
}
