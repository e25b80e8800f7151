package kinds

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// ReasonInvalidConnection: a connection entry names a value the resource cannot give.
const ReasonInvalidConnection = "InvalidConnection"

// moduleConnectionKeys maps a Module's outputs to connection keys as its spec.connection
// says; without entries, nil: every output under its own name.
func moduleConnectionKeys(mg resource.Managed) map[string]string {
	conn := mg.(*terraformv1.Module).Spec.Connection
	if len(conn) == 0 {
		return nil
	}
	keys := map[string]string{}
	for _, c := range conn {
		if c.FromOutput != "" {
			keys[c.FromOutput] = c.ToKey
		}
	}
	return keys
}

// moduleProviderConnectionKeys are the keys of a Module's connection entries that are
// not outputs: literal values and values from its ProviderConfigs.
func moduleProviderConnectionKeys(mg resource.Managed) []string {
	var keys []string
	for _, c := range mg.(*terraformv1.Module).Spec.Connection {
		if c.FromOutput == "" {
			keys = append(keys, c.ToKey)
		}
	}
	return keys
}

// providerValues are what one ProviderConfig a Module uses offers its connection
// entries: its config, and the credentials it lets Modules hand out.
type providerValues struct {
	config      map[string]any
	credentials map[string]string
}

// moduleConnection is the connection details of a Module's entries with a literal value
// or a value from one of the ProviderConfigs it uses (by name in used).
func moduleConnection(m *terraformv1.Module, used map[string]providerValues) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, c := range m.Spec.Connection {
		switch {
		case c.Value != nil:
			out[c.ToKey] = []byte(*c.Value)
		case c.FromProviderConfig != nil:
			v, err := providerValue(*c.FromProviderConfig, used)
			if err != nil {
				return nil, resource.UserErrorf(ReasonInvalidConnection, "connection key %s: %v", c.ToKey, err)
			}
			out[c.ToKey] = []byte(v)
		}
	}
	return out, nil
}

// providerValue reads one value of a ProviderConfig the Module uses.
func providerValue(from terraformv1.ProviderConfigValue, used map[string]providerValues) (string, error) {
	pv, ok := used[from.Name]
	if !ok {
		return "", fmt.Errorf("%s %s is not one this resource uses (providerRef, providerConfigRefs)", terraformv1.ProviderConfigResource, from.Name)
	}
	if from.Credential != "" {
		v, ok := pv.credentials[from.Credential]
		if !ok {
			return "", fmt.Errorf("%s %s hands out no credential %s: it must be among its credentials and listed in its connectionCredentials", terraformv1.ProviderConfigResource, from.Name, from.Credential)
		}
		return v, nil
	}
	v, ok := lookupPath(pv.config, strings.Split(from.ConfigPath, "."))
	if !ok {
		return "", fmt.Errorf("%s %s has no config %s", terraformv1.ProviderConfigResource, from.Name, from.ConfigPath)
	}
	return secretText(v), nil
}

// lookupPath walks maps by key and lists by index.
func lookupPath(v any, path []string) (any, bool) {
	for _, seg := range path {
		switch t := v.(type) {
		case map[string]any:
			next, ok := t[seg]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			v = t[i]
		default:
			return nil, false
		}
	}
	return v, v != nil
}

// handedOut are the credentials of pc (by env, with their values) it lets Modules put in
// connection Secrets.
func handedOut(pc *terraformv1.ProviderConfig, env map[string]string) map[string]string {
	out := map[string]string{}
	for _, cred := range pc.Spec.Credentials {
		if slices.Contains(pc.Spec.ConnectionCredentials, cred.Env) {
			out[cred.Env] = env[cred.Env]
		}
	}
	return out
}

// secretText is a value as a connection Secret holds it: a string as it is, anything
// else as JSON.
func secretText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
