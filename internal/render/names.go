package render

import (
	"strings"
	"unicode"
)

// SnakeKeys returns values with its top-level keys turned from Kubernetes camelCase
// into Terraform snake_case (bucketName → bucket_name). Nested keys are left alone:
// they are data, such as tag names.
func SnakeKeys(values map[string]any) map[string]any {
	out := make(map[string]any, len(values))
	for k, v := range values {
		out[Snake(k)] = v
	}
	return out
}

// Snake turns camelCase into snake_case; runs of capitals count as one word, with a
// plural s (accessKeyID → access_key_id, subnetIDs → subnet_ids).
func Snake(s string) string {
	var b strings.Builder
	runes := []rune(s)
	plural := func(i int) bool { return runes[i] == 's' && (i+1 == len(runes) || unicode.IsUpper(runes[i+1])) }
	for i, r := range runes {
		if unicode.IsUpper(r) {
			prevLower := i > 0 && !unicode.IsUpper(runes[i-1])
			nextLower := i > 0 && i+1 < len(runes) && unicode.IsLower(runes[i+1]) && unicode.IsUpper(runes[i-1]) && !plural(i+1)
			if prevLower || nextLower {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Camel turns snake_case into camelCase (bucket_name → bucketName), for status fields.
func Camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}
