package plugins

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// schemaMethods answer with the provider's whole schema.
var schemaMethods = map[string]bool{
	"/tfplugin5.Provider/GetSchema":         true,
	"/tfplugin6.Provider/GetProviderSchema": true,
}

// schemaMethod is the call that asks a provider speaking protocol (5 or 6) for its schema.
func schemaMethod(protocol int) string {
	if protocol == 6 {
		return "/tfplugin6.Provider/GetProviderSchema"
	}
	return "/tfplugin5.Provider/GetSchema"
}

// typeMaps are the fields of a schema answer (the same numbers in protocols 5 and 6)
// that map type names to schemas: resources, data sources and ephemeral resources.
var typeMaps = map[protowire.Number]bool{2: true, 3: true, 8: true}

// trimSchema keeps of a schema answer the types in want, and all else (the provider's
// own schema, functions, capabilities). Terraform decodes every schema it is given on
// every run: for a large provider that costs more CPU and memory than the plan of a few
// resources.
func trimSchema(resp []byte, want map[string]bool) ([]byte, error) {
	out := make([]byte, 0, len(resp)/8)
	for msg := resp; len(msg) > 0; {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return nil, fmt.Errorf("read schema answer: %w", protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return nil, fmt.Errorf("read schema answer: %w", protowire.ParseError(m))
		}
		field := msg[:n+m]
		msg = msg[n+m:]
		if typeMaps[num] && typ == protowire.BytesType {
			entry, _ := protowire.ConsumeBytes(field[n:])
			if name, ok := mapKey(entry); ok && !want[name] {
				continue
			}
		}
		out = append(out, field...)
	}
	return out, nil
}

// mapKey reads the key (field 1) of a map<string, _> entry.
func mapKey(entry []byte) (string, bool) {
	for len(entry) > 0 {
		num, typ, n := protowire.ConsumeTag(entry)
		if n < 0 {
			return "", false
		}
		if num == 1 && typ == protowire.BytesType {
			key, m := protowire.ConsumeString(entry[n:])
			return key, m >= 0
		}
		m := protowire.ConsumeFieldValue(num, typ, entry[n:])
		if m < 0 {
			return "", false
		}
		entry = entry[n+m:]
	}
	return "", false
}
