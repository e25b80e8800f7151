package plugins

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
)

// schemaEntry is field num of a schema answer: a map entry from name to its schema.
func schemaEntry(num protowire.Number, name string) []byte {
	var e []byte
	e = protowire.AppendTag(e, 1, protowire.BytesType)
	e = protowire.AppendString(e, name)
	e = protowire.AppendTag(e, 2, protowire.BytesType)
	e = protowire.AppendBytes(e, []byte("schema of "+name))
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), e)
}

// field1 is an answer holding s in field 1, and no diagnostics.
func field1(s string) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte(s))
}

// withDiagnostics is answer with field num (its diagnostics) added.
func withDiagnostics(answer []byte, num protowire.Number) []byte {
	out := append([]byte(nil), answer...)
	return protowire.AppendBytes(protowire.AppendTag(out, num, protowire.BytesType), []byte("diagnostic"))
}

// TestPureCalls: which pure calls the provider is asked, and what terraform is answered.
func TestPureCalls(t *testing.T) {
	const (
		schema   = "/tfplugin6.Provider/GetProviderSchema"
		schema5  = "/tfplugin5.Provider/GetSchema"
		metadata = "/tfplugin6.Provider/GetMetadata"
		validate = "/tfplugin6.Provider/ValidateProviderConfig"
	)
	full := string(append(schemaEntry(2, "aws_s3_bucket"), schemaEntry(2, "aws_instance")...))
	meta, valid := string(field1("meta")), string(field1("valid"))
	invalid := string(withDiagnostics(field1("x"), 2))
	bucketOnly := string(schemaEntry(2, "aws_s3_bucket"))
	type call struct {
		proc   string // "a" and "b" run one binary, "other" another
		method string
		req    string
	}
	cases := []struct {
		name    string
		types   map[string]bool // of process "b"
		answers map[string]string
		fail    error // the provider's error
		calls   []call
		want    []string // answers, "error" for an error
		asked   int
	}{{
		name:    "asked once, then answered from the cache",
		answers: map[string]string{metadata: meta},
		calls:   []call{{"a", metadata, ""}, {"a", metadata, ""}},
		want:    []string{meta, meta},
		asked:   1,
	}, {
		name:    "the processes of one binary share the cache",
		answers: map[string]string{metadata: meta},
		calls:   []call{{"a", metadata, ""}, {"b", metadata, ""}},
		want:    []string{meta, meta},
		asked:   1,
	}, {
		name:    "another binary is asked itself",
		answers: map[string]string{metadata: meta},
		calls:   []call{{"a", metadata, ""}, {"other", metadata, ""}},
		want:    []string{meta, meta},
		asked:   2,
	}, {
		name:    "another request is asked itself",
		answers: map[string]string{validate: valid},
		calls:   []call{{"a", validate, "region=eu"}, {"a", validate, "region=us"}, {"a", validate, "region=eu"}},
		want:    []string{valid, valid, valid},
		asked:   2,
	}, {
		name:    "an answer with diagnostics is passed on and never cached",
		answers: map[string]string{validate: invalid},
		calls:   []call{{"a", validate, "bad"}, {"a", validate, "bad"}},
		want:    []string{invalid, invalid},
		asked:   2,
	}, {
		name:  "a provider error is passed on and never cached",
		fail:  errors.New("unavailable"),
		calls: []call{{"a", metadata, ""}, {"a", metadata, ""}},
		want:  []string{"error", "error"},
		asked: 2,
	}, {
		name:    "the schema is trimmed to the process's types, the cache keeps it whole",
		types:   map[string]bool{"aws_s3_bucket": true},
		answers: map[string]string{schema: full},
		calls:   []call{{"b", schema, ""}, {"a", schema, ""}},
		want:    []string{bucketOnly, full},
		asked:   1,
	}, {
		name:    "protocol 5's schema is trimmed too",
		types:   map[string]bool{"aws_s3_bucket": true},
		answers: map[string]string{schema5: full},
		calls:   []call{{"b", schema5, ""}},
		want:    []string{bucketOnly},
		asked:   1,
	}, {
		name:    "only the schema is trimmed",
		types:   map[string]bool{"aws_s3_bucket": true},
		answers: map[string]string{metadata: full},
		calls:   []call{{"b", metadata, ""}},
		want:    []string{full},
		asked:   1,
	}, {
		name:    "a schema with diagnostics is passed on whole",
		types:   map[string]bool{"aws_s3_bucket": true},
		answers: map[string]string{schema: string(withDiagnostics([]byte(full), 4))},
		calls:   []call{{"b", schema, ""}},
		want:    []string{string(withDiagnostics([]byte(full), 4))},
		asked:   1,
	}, {
		name:    "a schema that cannot be read cannot be trimmed",
		types:   map[string]bool{"aws_s3_bucket": true},
		answers: map[string]string{schema: "\xff"},
		calls:   []call{{"b", schema, ""}},
		want:    []string{"\xff"}, // unreadable counts as diagnostics: passed on as it is
		asked:   1,
	}, {
		name:  "a call that is not pure is refused",
		calls: []call{{"a", "/tfplugin6.Provider/ApplyResourceChange", ""}},
		want:  []string{"error"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cache := &answers{}
			procs := map[string]*pureCalls{
				"a":     {binary: "aws", cache: cache},
				"b":     {binary: "aws", cache: cache, types: tc.types},
				"other": {binary: "google", cache: cache},
			}
			asked := 0
			var got []string
			for _, c := range tc.calls {
				resp, err := procs[c.proc].answer(context.Background(), c.method, []byte(c.req), func() ([]byte, error) {
					asked++
					return []byte(tc.answers[c.method]), tc.fail
				})
				if err != nil {
					got = append(got, "error")
					continue
				}
				got = append(got, string(resp))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
			if asked != tc.asked {
				t.Errorf("the provider was asked %d times, want %d", asked, tc.asked)
			}
		})
	}
}

// TestAnswersBounded: the cache starts over when full, rather than grow without end.
func TestAnswersBounded(t *testing.T) {
	a := &answers{}
	first := a.key("aws", "m", []byte("0"))
	a.put(first, []byte("first"))
	for i := 1; i < maxAnswers; i++ {
		a.put(a.key("aws", "m", []byte{byte(i), byte(i >> 8)}), nil)
	}
	if _, ok := a.get(first); !ok {
		t.Fatal("an answer was dropped before the cache was full")
	}
	a.put(a.key("aws", "m", []byte("one more")), nil)
	if _, ok := a.get(first); ok || len(a.entries) != 1 {
		t.Errorf("a full cache did not start over: %d entries", len(a.entries))
	}
}

func TestHasField(t *testing.T) {
	clean := field1("prepared config")
	varint := protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 7)
	cases := []struct {
		name string
		msg  []byte
		num  protowire.Number
		want bool
	}{
		{"without diagnostics: cached", clean, 2, false},
		{"with diagnostics: never cached", withDiagnostics(clean, 2), 2, true},
		{"diagnostics after a varint field", withDiagnostics(varint, 4), 4, true},
		{"another field number", withDiagnostics(clean, 2), 4, false},
		{"unreadable tag counts as diagnostics", []byte{0xff}, 2, true},
		{"truncated value counts as diagnostics", clean[:len(clean)-3], 2, true},
		{"empty answer", nil, 4, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := hasField(tc.msg, tc.num); got != tc.want {
				t.Errorf("hasField = %v, want %v", got, tc.want)
			}
		})
	}
}
