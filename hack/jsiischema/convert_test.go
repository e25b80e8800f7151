package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/zclconf/go-cty/cty"
)

// js is a trimmed copy of what the bindings generate for a resource: a computed
// attribute, a single block, a set block, a set of strings and a computed list of objects.
const js = `class ThingSettingsOutputReference extends cdktf.ComplexObject {
    get size() {
        return this.getNumberAttribute('size');
    }
    // state - computed: true, optional: false, required: false
    get state() {
        return this.getStringAttribute('state');
    }
}
function thingRuleToHclTerraform(struct) {
    const attrs = {
        ports: {
            value: cdktf.listMapperHcl(cdktf.numberToHclTerraform, false)(struct.ports),
            isBlock: false,
            type: "set",
            storageClassType: "numberList",
        },
    };
}
class ThingRuleOutputReference extends cdktf.ComplexObject {
    get ports() {
        return cdktf.Fn.tolist(this.getNumberListAttribute('ports'));
    }
}
class ThingAddressList extends cdktf.ComplexList {
}
class ThingAddressOutputReference extends cdktf.ComplexObject {
    // ip_address - computed: true, optional: false, required: false
    get ipAddress() {
        return this.getStringAttribute('ip_address');
    }
}
class Thing extends cdktf.TerraformResource {
    constructor(scope, id, config) {
        // address - computed: true, optional: false, required: false
        this._address = new ThingAddressList(this, "address", false);
        // settings - computed: false, optional: false, required: true
        this._settings = new ThingSettingsOutputReference(this, "settings");
        // rule - computed: false, optional: true, required: false
        this._rule = new ThingRuleList(this, "rule", true);
        // timeouts - computed: false, optional: true, required: false
        this._timeouts = new ThingTimeoutsOutputReference(this, "timeouts");
    }
    // self_link - computed: true, optional: false, required: false
    get selfLink() {
        return this.getStringAttribute('self_link');
    }
    // enabled - computed: true, optional: false, required: false
    get enabled() {
        return this.getBooleanAttribute('enabled');
    }
    synthesizeHclAttributes() {
        const attrs = {
            settings: {
                value: thingToHclTerraform(this._settings.internalValue),
                isBlock: true,
                type: "list",
                storageClassType: "ThingList",
            },
            rule: {
                value: cdktf.listMapperHcl(thingRuleToHclTerraform, true)(this._rule.internalValue),
                isBlock: true,
                type: "set",
                storageClassType: "ThingRuleList",
            },
            timeouts: {
                value: thingTimeoutsToHclTerraform(this._timeouts.internalValue),
                isBlock: true,
                type: "struct",
                storageClassType: "ThingTimeouts",
            },
        };
    }
}
`

func prop(name, link string, optional bool, t typeRef) jsiiProperty {
	p := jsiiProperty{Name: name, Optional: optional, Type: t}
	if link != "" {
		p.Docs.Summary = "Docs at Terraform Registry: {@link https://registry.terraform.io/providers/hashicorp/x/1.0.0/docs/resources/thing#" + link + " Thing#" + link + "}."
	}
	return p
}

func named(fqn string) typeRef { return typeRef{FQN: fqn} }

func arrayOf(e typeRef) typeRef {
	t := typeRef{Collection: &struct {
		Kind        string  `json:"kind"`
		ElementType typeRef `json:"elementtype"`
	}{Kind: "array", ElementType: e}}
	return t
}

// TestBlock converts a resource with each shape the bindings give that is not a
// one-to-one copy: names from the registry links (nodeAttribute is node), booleans that
// getters read as IResolvable, blocks with at most one element, set blocks, single
// (timeouts) blocks, sets of numbers, and computed lists of objects.
func TestBlock(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.js"), []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	jsf, err := readJS(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := "@cdktf/provider-x.thing."
	str, num := typeRef{Primitive: "string"}, typeRef{Primitive: "number"}
	types := map[string]*jsiiType{
		p + "ThingConfig": {FQN: p + "ThingConfig", Datatype: true, Properties: []jsiiProperty{
			prop("nodeAttribute", "node", false, str),
			prop("settings", "settings", false, named(p+"ThingSettings")),
			prop("rule", "rule", true, arrayOf(named(p+"ThingRule"))),
			prop("timeouts", "timeouts", true, named(p+"ThingTimeouts")),
		}},
		p + "Thing": {FQN: p + "Thing", Properties: []jsiiProperty{
			{Name: "selfLink", Type: str}, {Name: "enabled", Type: named("cdktf.IResolvable")}, {Name: "address", Type: named(p + "ThingAddressList")},
		}},
		p + "ThingSettings":                {FQN: p + "ThingSettings", Datatype: true, Properties: []jsiiProperty{prop("size", "size", true, num)}},
		p + "ThingSettingsOutputReference": {FQN: p + "ThingSettingsOutputReference", Properties: []jsiiProperty{{Name: "state", Type: str}}},
		p + "ThingRule":                    {FQN: p + "ThingRule", Datatype: true, Properties: []jsiiProperty{prop("ports", "ports", true, arrayOf(num))}},
		p + "ThingRuleOutputReference":     {FQN: p + "ThingRuleOutputReference"},
		p + "ThingTimeouts":                {FQN: p + "ThingTimeouts", Datatype: true, Properties: []jsiiProperty{prop("create", "create", true, str)}},
		p + "ThingTimeoutsOutputReference": {FQN: p + "ThingTimeoutsOutputReference"},
		p + "ThingAddressOutputReference":  {FQN: p + "ThingAddressOutputReference", Properties: []jsiiProperty{{Name: "ipAddress", Type: str}}},
	}
	c := &converter{types: types, js: jsf}
	got, err := c.block(c.types[p+"ThingConfig"], p+"Thing", "Thing")
	if err != nil {
		t.Fatal(err)
	}
	want := &tfjson.SchemaBlock{
		Attributes: map[string]*tfjson.SchemaAttribute{
			"node":      {AttributeType: cty.String, Required: true},
			"self_link": {AttributeType: cty.String, Computed: true},
			"enabled":   {AttributeType: cty.Bool, Computed: true},
			"address":   {AttributeType: cty.List(cty.Object(map[string]cty.Type{"ip_address": cty.String})), Computed: true},
		},
		NestedBlocks: map[string]*tfjson.SchemaBlockType{
			"settings": {NestingMode: tfjson.SchemaNestingModeList, MinItems: 1, MaxItems: 1, Block: &tfjson.SchemaBlock{
				Attributes:   map[string]*tfjson.SchemaAttribute{"size": {AttributeType: cty.Number, Optional: true, Computed: true}, "state": {AttributeType: cty.String, Computed: true}},
				NestedBlocks: map[string]*tfjson.SchemaBlockType{}}},
			"rule": {NestingMode: tfjson.SchemaNestingModeSet, Block: &tfjson.SchemaBlock{
				Attributes:   map[string]*tfjson.SchemaAttribute{"ports": {AttributeType: cty.Set(cty.Number), Optional: true, Computed: true}},
				NestedBlocks: map[string]*tfjson.SchemaBlockType{}}},
			"timeouts": {NestingMode: tfjson.SchemaNestingModeSingle, Block: &tfjson.SchemaBlock{
				Attributes:   map[string]*tfjson.SchemaAttribute{"create": {AttributeType: cty.String, Optional: true, Computed: true}},
				NestedBlocks: map[string]*tfjson.SchemaBlockType{}}},
		},
	}
	if d := cmp.Diff(want, got, cmp.Comparer(func(a, b cty.Type) bool { return a.Equals(b) })); d != "" {
		t.Errorf("block (-want +got):\n%s", d)
	}
}

func TestLinkName(t *testing.T) {
	for _, tc := range []struct{ summary, want string }{
		{"Docs at Terraform Registry: {@link https://registry.terraform.io/providers/hashicorp/google/6.50.0/docs/resources/sql_user#password SqlUser#password}.", "password"},
		{"Docs at Terraform Registry: {@link https://registry.terraform.io/providers/hashicorp/google/6.50.0/docs#access_token GoogleProvider#access_token}.", "access_token"},
		{"The name.", ""},
	} {
		if got := linkName(jsiiProperty{Docs: struct {
			Summary string `json:"summary"`
			Remarks string `json:"remarks"`
		}{Summary: tc.summary}}); got != tc.want {
			t.Errorf("linkName(%q) = %q, want %q", tc.summary, got, tc.want)
		}
	}
}

func TestArgumentFlagsDisagree(t *testing.T) {
	p := prop("name", "name", true, typeRef{Primitive: "string"})
	if _, err := argumentFlags(p, map[string]jsAttr{"name": {Snake: "other"}}); err == nil {
		t.Error("a registry link and a comment that disagree on the name: no error")
	}
}

func TestMarkSensitive(t *testing.T) {
	b := &tfjson.SchemaBlock{Attributes: map[string]*tfjson.SchemaAttribute{"password": {AttributeType: cty.String}}}
	if missing := markSensitive("google_sql_user", b); len(missing) != 0 || !b.Attributes["password"].Sensitive {
		t.Errorf("password not marked sensitive (missing %v)", missing)
	}
	if missing := markSensitive("google_storage_hmac_key", b); !cmp.Equal(missing, []string{"google_storage_hmac_key.secret"}) {
		t.Errorf("missing = %v, want the hmac key's secret", missing)
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{resourceNamespace("google", "google_sql_database_instance"), "sqlDatabaseInstance"},
		{dataNamespace("azurerm_client_config"), "dataAzurermClientConfig"},
		{kebab("sqlDatabaseInstance"), "sql-database-instance"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
