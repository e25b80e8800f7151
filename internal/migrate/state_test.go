package migrate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStateAddresses(t *testing.T) {
	state := []byte(`{"version": 4, "resources": [
		{"mode": "managed", "type": "random_password", "name": "p"},
		{"mode": "data", "type": "terraform_remote_state", "name": "net"},
		{"module": "module.vpc", "mode": "managed", "type": "aws_vpc", "name": "v"},
		{"module": "module.vpc", "mode": "managed", "type": "aws_subnet", "name": "s"},
		{"module": "module.db[0].module.inner", "mode": "managed", "type": "x", "name": "y"},
		{"module": "module.per[\"a.b\"]", "mode": "managed", "type": "x", "name": "y"},
		{"module": "module.per[\"c\"]", "mode": "managed", "type": "x", "name": "y"}
	]}`)
	got, err := stateAddresses(state)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`data.terraform_remote_state.net`, `module.db[0]`, `module.per["a.b"]`, `module.per["c"]`, `module.vpc`, `random_password.p`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("addresses (-want +got):\n%s", diff)
	}
	if _, err := stateAddresses([]byte(`{"version": 3}`)); err == nil {
		t.Error("an old state format must be refused")
	}
}

// TestFirstModuleInstance: the root-level module instance of a module path, for_each
// keys of any shape included.
func TestFirstModuleInstance(t *testing.T) {
	for path, want := range map[string]string{
		`module.vpc`:                             `module.vpc`,
		`module.vpc[0].module.subnets`:           `module.vpc[0]`,
		`module.vpc["eu-west-1/a b"].module.sub`: `module.vpc["eu-west-1/a b"]`,
		`module.vpc["a\"b"]`:                     `module.vpc["a\"b"]`,
		`module.vpc.module.subnets["x"]`:         `module.vpc`,
		`aws_s3_bucket.b`:                        `aws_s3_bucket.b`,
	} {
		if got := firstModuleInstance(path); got != want {
			t.Errorf("firstModuleInstance(%s) = %s, want %s", path, got, want)
		}
	}
}
