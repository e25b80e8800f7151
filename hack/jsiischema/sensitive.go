package main

import (
	"strings"

	tfjson "github.com/hashicorp/terraform-json"
)

// sensitive are the attributes the providers mark sensitive, for the resources the
// bundled modules use and the providers' own configuration ("provider"): the bindings
// do not record sensitivity, so these follow the providers' documentation. A nested
// attribute is written block.attribute.
var sensitive = map[string][]string{
	"google":                             {"credentials", "access_token"},
	"google_sql_user":                    {"password"},
	"google_sql_database_instance":       {"root_password", "replica_configuration.client_key", "replica_configuration.password"},
	"google_storage_hmac_key":            {"secret"},
	"google_redis_instance":              {"auth_string"},
	"google_container_cluster":           {"master_auth.client_key"},
	"azurerm":                            {"client_secret", "client_certificate", "client_certificate_password", "oidc_token", "oidc_request_token"},
	"azurerm_kubernetes_cluster":         {"kube_config_raw", "kube_admin_config_raw", "kube_config", "kube_admin_config", "service_principal.client_secret", "windows_profile.admin_password"},
	"azurerm_mysql_flexible_server":      {"administrator_password"},
	"azurerm_postgresql_flexible_server": {"administrator_password"},
	"azurerm_redis_cache":                {"primary_access_key", "secondary_access_key", "primary_connection_string", "secondary_connection_string"},
	"azurerm_storage_account": {"primary_access_key", "secondary_access_key", "primary_connection_string", "secondary_connection_string",
		"primary_blob_connection_string", "secondary_blob_connection_string"},
}

// markSensitive marks name's sensitive attributes in b; it returns the paths it did not
// find, so that a renamed attribute is noticed rather than silently left unmarked.
func markSensitive(name string, b *tfjson.SchemaBlock) []string {
	var missing []string
	for _, path := range sensitive[name] {
		if a := attributeAt(b, strings.Split(path, ".")); a != nil {
			a.Sensitive = true
		} else {
			missing = append(missing, name+"."+path)
		}
	}
	return missing
}

func attributeAt(b *tfjson.SchemaBlock, path []string) *tfjson.SchemaAttribute {
	if len(path) == 1 {
		return b.Attributes[path[0]]
	}
	nb := b.NestedBlocks[path[0]]
	if nb == nil {
		return nil
	}
	return attributeAt(nb.Block, path[1:])
}
