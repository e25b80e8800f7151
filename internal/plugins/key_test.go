package plugins

import (
	"context"
	"testing"
)

// TestKey: runs share processes only when binary, environment, provider configuration
// and types are alike; the order they are given in does not matter.
func TestKey(t *testing.T) {
	type in struct {
		binary string
		env    map[string]string
		config string
		types  []string
	}
	base := in{"aws", map[string]string{"AWS_REGION": "eu-west-1", "TOKEN": "one"}, "config", []string{"aws_instance", "aws_s3_bucket"}}
	cases := []struct {
		name  string
		other in
		same  bool
	}{
		{"alike", base, true},
		{"environment in another order", in{"aws", map[string]string{"TOKEN": "one", "AWS_REGION": "eu-west-1"}, "config", base.types}, true},
		{"types in another order", in{"aws", base.env, "config", []string{"aws_s3_bucket", "aws_instance"}}, true},
		{"another binary", in{"aws2", base.env, "config", base.types}, false},
		{"other credentials", in{"aws", map[string]string{"AWS_REGION": "eu-west-1", "TOKEN": "two"}, "config", base.types}, false},
		{"one variable less", in{"aws", map[string]string{"TOKEN": "one"}, "config", base.types}, false},
		// Secret values are any bytes: one value must not pass for two variables.
		{"one value holding two variables", in{"aws", map[string]string{"AWS_REGION": "eu-west-1\x00TOKEN=one"}, "config", base.types}, false},
		{"configuration running into the types", in{"aws", base.env, "config\x00aws_instance", []string{"aws_s3_bucket"}}, false},
		{"another provider configuration", in{"aws", base.env, "config2", base.types}, false},
		{"other types", in{"aws", base.env, "config", []string{"aws_instance"}}, false},
		{"every type rather than none", in{"aws", base.env, "config", nil}, false},
	}
	key := func(i in) string { return Key(i.binary, i.env, []byte(i.config), i.types) }
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := key(tc.other) == key(base); got != tc.same {
				t.Errorf("same key = %v, want %v", got, tc.same)
			}
		})
	}
	if Key("aws", nil, nil, nil) == Key("aws", nil, nil, []string{}) {
		t.Error("every type and no type share a key")
	}
}

// TestOff: with provider reuse off, a run is lent nothing and terraform starts its own
// providers.
func TestOff(t *testing.T) {
	var pool Off
	l, err := pool.Acquire(context.Background(), []Provider{fakeProvider}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Reattach) != 0 || pool.Started() != 0 {
		t.Errorf("Off lent %v and started %d processes, want none", l.Reattach, pool.Started())
	}
	l.Release(false)
	pool.Stop()
}
