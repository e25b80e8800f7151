package plandoc

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// SensitiveValue is what a rule sees in place of a sensitive value, as `plan show` shows it.
const SensitiveValue = "(sensitive value)"

// minSecretLen is the shortest text that, sensitive anywhere in a plan, is masked
// everywhere in it (as the engine masks plan texts).
const minSecretLen = 4

// Document is a plan as rules see it: {"resource_changes": [...]} from terraform's plan
// JSON, sensitive values replaced by SensitiveValue.
type Document struct {
	// Changes are the resource changes, redacted, as generic JSON values.
	Changes []any
}

// ParsePlan reads terraform's plan JSON (`terraform show -json PLAN`, or a document
// Redacted made) and redacts it: every value before_sensitive or after_sensitive marks,
// every text equal to such a value anywhere else, and the texts of secrets.
func ParsePlan(data []byte, secrets ...string) (*Document, error) {
	var raw struct {
		ResourceChanges []any `json:"resource_changes"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("read plan JSON: %w", err)
	}
	return &Document{Changes: Redact(raw.ResourceChanges, secrets...)}, nil
}

// Redacted is the JSON of a redacted document of resource changes (terraform's
// resource_changes, as generic JSON values), for keeping beside a plan.
func Redacted(changes []any, secrets ...string) ([]byte, error) {
	b, err := json.Marshal(map[string]any{"resource_changes": Redact(changes, secrets...)})
	if err != nil {
		return nil, fmt.Errorf("encode plan document: %w", err)
	}
	return b, nil
}

// Redact returns resource changes with sensitive values replaced: in each change, what
// either mask marks on either side (terraform does not always mark the prior value of a
// value that became sensitive), then every text equal to a sensitive text or to one of
// secrets, anywhere. Whole numbers become integers, so that rules compare them as such.
func Redact(changes []any, secrets ...string) []any {
	secret := map[string]bool{}
	for _, s := range secrets {
		if len(s) >= minSecretLen {
			secret[s] = true
		}
	}
	out := make([]any, 0, len(changes))
	for _, c := range changes {
		rc, ok := c.(map[string]any)
		if !ok {
			continue
		}
		rc = shallow(rc)
		if ch, ok := rc["change"].(map[string]any); ok {
			rc["change"] = maskChange(shallow(ch), secret)
		}
		out = append(out, rc)
	}
	r := replacer(secret)
	for i, c := range out {
		out[i] = scrub(c, r)
	}
	return out
}

// replacer replaces every secret text, the longest first, inside any text.
func replacer(secret map[string]bool) *strings.Replacer {
	texts := make([]string, 0, len(secret))
	for s := range secret {
		texts = append(texts, s)
	}
	slices.SortFunc(texts, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(texts))
	for _, s := range texts {
		pairs = append(pairs, s, SensitiveValue)
	}
	return strings.NewReplacer(pairs...)
}

// maskChange masks one change's before and after, collecting the masked texts.
func maskChange(ch map[string]any, secret map[string]bool) map[string]any {
	mask := UnionMask(ch["before_sensitive"], ch["after_sensitive"])
	for _, side := range []string{"before", "after"} {
		if v, ok := ch[side]; ok {
			CollectSecrets(v, mask, false, secret)
			ch[side] = mask1(v, mask)
		}
	}
	return ch
}

// shallow copies a map one level deep.
func shallow(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// UnionMask is a sensitivity mask (terraform's before_sensitive or after_sensitive)
// marking what either a or b marks.
func UnionMask(a, b any) any {
	if a == true || b == true {
		return true
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok || bok {
		out := map[string]any{}
		for k, v := range am {
			out[k] = v
		}
		for k, v := range bm {
			out[k] = UnionMask(out[k], v)
		}
		return out
	}
	al, _ := a.([]any)
	bl, _ := b.([]any)
	if al == nil && bl == nil {
		return false
	}
	out := make([]any, max(len(al), len(bl)))
	for i := range out {
		var x, y any
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		out[i] = UnionMask(x, y)
	}
	return out
}

// mask1 returns v with what mask marks replaced by SensitiveValue.
func mask1(v, mask any) any {
	if mask == true {
		if v == nil {
			return nil
		}
		return SensitiveValue
	}
	switch x := v.(type) {
	case map[string]any:
		m, _ := mask.(map[string]any)
		out := make(map[string]any, len(x))
		for k, sub := range x {
			out[k] = mask1(sub, m[k])
		}
		return out
	case []any:
		m, _ := mask.([]any)
		out := make([]any, len(x))
		for i, sub := range x {
			var sm any
			if i < len(m) {
				sm = m[i]
			}
			out[i] = mask1(sub, sm)
		}
		return out
	}
	return v
}

// CollectSecrets adds to secret the text leaves of v, of at least four characters, that
// mask (or an enclosing mask, under) marks.
func CollectSecrets(v, mask any, under bool, secret map[string]bool) {
	under = under || mask == true
	switch x := v.(type) {
	case string:
		if under && len(x) >= minSecretLen {
			secret[x] = true
		}
	case map[string]any:
		m, _ := mask.(map[string]any)
		for k, sub := range x {
			CollectSecrets(sub, m[k], under, secret)
		}
	case []any:
		m, _ := mask.([]any)
		for i, sub := range x {
			var sm any
			if i < len(m) {
				sm = m[i]
			}
			CollectSecrets(sub, sm, under, secret)
		}
	}
}

// scrub returns v with every secret text in its texts replaced, and whole numbers made
// integers.
func scrub(v any, r *strings.Replacer) any {
	switch x := v.(type) {
	case string:
		return r.Replace(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, sub := range x {
			out[k] = scrub(sub, r)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, sub := range x {
			out[i] = scrub(sub, r)
		}
		return out
	}
	return v
}
