package kinds

import (
	"regexp"
	"strings"
	"testing"
)

func TestBucketName(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	cases := map[string][3]string{
		"demo-photos-0a1b2c3d":    {"demo", "photos", "0a1b2c3d-e5f6"},
		"my-ns-my-claim-12345678": {"My_NS", "my.claim", "12345678-9999"},
	}
	for want, in := range cases {
		if got := BucketName(in[0], in[1], in[2]); got != want {
			t.Errorf("BucketName(%v) = %q, want %q", in, got, want)
		}
	}
	long := BucketName(strings.Repeat("n", 60), strings.Repeat("c", 60), "abcdef12-3456")
	if len(long) > 63 || !valid.MatchString(long) {
		t.Errorf("long name %q is not a valid bucket name", long)
	}
}

func TestIdentifierAndVersions(t *testing.T) {
	if got := Identifier("Team-A", "orders.db", "1234abcd-0000", 31); got != "team_a_orders_db_1234abcd" {
		t.Errorf("Identifier = %q", got)
	}
	if got := Identifier("9lives", strings.Repeat("x", 80), "1234abcd", 31); len(got) > 31 || !strings.HasPrefix(got, "db_9lives") {
		t.Errorf("long Identifier = %q", got)
	}
	for _, c := range []struct {
		want, offered string
		ok            bool
	}{{"15", "15", true}, {"15.4", "15", true}, {"10", "10.11", true}, {"14", "15", false}, {"1", "15", false}} {
		if got := versionMatches(c.want, c.offered); got != c.ok {
			t.Errorf("versionMatches(%q, %q) = %v", c.want, c.offered, got)
		}
	}
}
