package main

import (
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// requiresReplace are the arguments whose change makes the real provider replace the
// resource (ForceNew), for the resources the bundled modules use: a schema does not
// say so, and neither do the bindings, so these follow the providers' documentation
// ("Changing this forces a new resource to be created"). A nested one is block.attribute
// (the block's first element).
var requiresReplace = map[string][]string{
	"google_sql_database_instance":                {"name", "project", "region", "encryption_key_name", "master_instance_name"},
	"google_sql_database":                         {"name", "instance", "project"},
	"google_sql_user":                             {"name", "instance", "host", "project"},
	"google_storage_bucket":                       {"name", "location", "project"},
	"google_service_account":                      {"account_id", "project"},
	"google_storage_hmac_key":                     {"service_account_email", "project"},
	"google_storage_bucket_iam_member":            {"bucket", "role", "member"},
	"google_redis_instance":                       {"name", "tier", "region", "location_id", "authorized_network", "connect_mode", "reserved_ip_range", "project"},
	"google_container_cluster":                    {"name", "location", "network", "subnetwork", "project"},
	"google_container_node_pool":                  {"name", "cluster", "location", "project", "node_config.machine_type"},
	"azurerm_resource_group":                      {"name", "location"},
	"azurerm_postgresql_flexible_server":          {"name", "resource_group_name", "location", "administrator_login", "delegated_subnet_id", "private_dns_zone_id", "geo_redundant_backup_enabled"},
	"azurerm_postgresql_flexible_server_database": {"name", "server_id", "charset", "collation"},
	"azurerm_mysql_flexible_server":               {"name", "resource_group_name", "location", "administrator_login", "delegated_subnet_id", "private_dns_zone_id", "geo_redundant_backup_enabled"},
	"azurerm_mysql_flexible_database":             {"name", "resource_group_name", "server_name", "charset", "collation"},
	"azurerm_storage_account":                     {"name", "resource_group_name", "location", "account_tier", "is_hns_enabled"},
	"azurerm_storage_container":                   {"name", "storage_account_id", "storage_account_name"},
	"azurerm_redis_cache":                         {"name", "resource_group_name", "location", "subnet_id", "zones"},
	"azurerm_kubernetes_cluster":                  {"name", "resource_group_name", "location", "dns_prefix", "node_resource_group"},
}

// replacePaths are the paths of typeName's replacing arguments whose value changes from
// prior to planned.
func replacePaths(typeName string, prior, planned tftypes.Value) []*tftypes.AttributePath {
	var out []*tftypes.AttributePath
	for _, name := range requiresReplace[typeName] {
		p := tftypes.NewAttributePath()
		parts := strings.Split(name, ".")
		for i, part := range parts {
			p = p.WithAttributeName(part)
			if i < len(parts)-1 {
				p = p.WithElementKeyInt(0)
			}
		}
		before, _, _ := tftypes.WalkAttributePath(prior, p)
		after, _, _ := tftypes.WalkAttributePath(planned, p)
		if !sameValue(before, after) {
			out = append(out, p)
		}
	}
	return out
}

func sameValue(a, b any) bool {
	va, okA := a.(tftypes.Value)
	vb, okB := b.(tftypes.Value)
	if !okA || !okB {
		return okA == okB
	}
	return va.Equal(vb)
}
