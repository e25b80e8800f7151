package main

import (
	"context"
	"fmt"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// provider serves one provider's schema.
type provider struct {
	schema    *tfprotov5.Schema
	resources map[string]*tfprotov5.Schema
	data      map[string]*tfprotov5.Schema
	log       *callLog
}

var _ tfprotov5.ProviderServer = (*provider)(nil)

func newProvider(address string, ps *tfjson.ProviderSchema, logPath string) (*provider, error) {
	p := &provider{resources: map[string]*tfprotov5.Schema{}, data: map[string]*tfprotov5.Schema{},
		log: &callLog{path: logPath, provider: address[strings.LastIndex(address, "/")+1:]}}
	var err error
	if p.schema, err = protoSchema(ps.ConfigSchema); err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	for _, set := range []struct {
		from map[string]*tfjson.Schema
		to   map[string]*tfprotov5.Schema
	}{{ps.ResourceSchemas, p.resources}, {ps.DataSourceSchemas, p.data}} {
		for name, s := range set.from {
			if set.to[name], err = protoSchema(s); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return p, nil
}

// diag is an error diagnostic.
func diag(format string, args ...any) []*tfprotov5.Diagnostic {
	return []*tfprotov5.Diagnostic{{Severity: tfprotov5.DiagnosticSeverityError, Summary: "standin-provider: " + fmt.Sprintf(format, args...)}}
}

// resource returns typeName's schema and decodes each of dvs with it.
func (p *provider) resource(schemas map[string]*tfprotov5.Schema, typeName string, dvs ...*tfprotov5.DynamicValue) (*tfprotov5.Schema, []tftypes.Value, []*tfprotov5.Diagnostic) {
	s, ok := schemas[typeName]
	if !ok {
		return nil, nil, diag("no schema for %s", typeName)
	}
	var vals []tftypes.Value
	for _, dv := range dvs {
		if dv == nil {
			vals = append(vals, tftypes.NewValue(s.ValueType(), nil))
			continue
		}
		v, err := dv.Unmarshal(s.ValueType())
		if err != nil {
			return nil, nil, diag("decode %s: %v", typeName, err)
		}
		vals = append(vals, v)
	}
	return s, vals, nil
}

func encode(s *tfprotov5.Schema, v tftypes.Value) (*tfprotov5.DynamicValue, []*tfprotov5.Diagnostic) {
	dv, err := tfprotov5.NewDynamicValue(s.ValueType(), v)
	if err != nil {
		return nil, diag("encode: %v", err)
	}
	return &dv, nil
}

func (p *provider) GetMetadata(context.Context, *tfprotov5.GetMetadataRequest) (*tfprotov5.GetMetadataResponse, error) {
	resp := &tfprotov5.GetMetadataResponse{}
	for _, n := range keys(p.resources) {
		resp.Resources = append(resp.Resources, tfprotov5.ResourceMetadata{TypeName: n})
	}
	for _, n := range keys(p.data) {
		resp.DataSources = append(resp.DataSources, tfprotov5.DataSourceMetadata{TypeName: n})
	}
	return resp, nil
}

func (p *provider) GetProviderSchema(context.Context, *tfprotov5.GetProviderSchemaRequest) (*tfprotov5.GetProviderSchemaResponse, error) {
	p.log.record(Call{Call: "GetProviderSchema"})
	return &tfprotov5.GetProviderSchemaResponse{Provider: p.schema, ResourceSchemas: p.resources, DataSourceSchemas: p.data,
		EphemeralResourceSchemas: map[string]*tfprotov5.Schema{}, Functions: map[string]*tfprotov5.Function{}}, nil
}

func (p *provider) GetResourceIdentitySchemas(context.Context, *tfprotov5.GetResourceIdentitySchemasRequest) (*tfprotov5.GetResourceIdentitySchemasResponse, error) {
	return &tfprotov5.GetResourceIdentitySchemasResponse{IdentitySchemas: map[string]*tfprotov5.ResourceIdentitySchema{}}, nil
}

func (p *provider) PrepareProviderConfig(_ context.Context, req *tfprotov5.PrepareProviderConfigRequest) (*tfprotov5.PrepareProviderConfigResponse, error) {
	p.log.record(Call{Call: "ValidateProviderConfig", Values: p.plainOf(p.schema, req.Config)})
	return &tfprotov5.PrepareProviderConfigResponse{PreparedConfig: req.Config}, nil
}

func (p *provider) ConfigureProvider(_ context.Context, req *tfprotov5.ConfigureProviderRequest) (*tfprotov5.ConfigureProviderResponse, error) {
	p.log.record(Call{Call: "ConfigureProvider", Values: p.plainOf(p.schema, req.Config)})
	return &tfprotov5.ConfigureProviderResponse{}, nil
}

func (p *provider) StopProvider(context.Context, *tfprotov5.StopProviderRequest) (*tfprotov5.StopProviderResponse, error) {
	return &tfprotov5.StopProviderResponse{}, nil
}

// plainOf decodes dv for the log (nil if it cannot).
func (p *provider) plainOf(s *tfprotov5.Schema, dv *tfprotov5.DynamicValue) any {
	if dv == nil {
		return nil
	}
	v, err := dv.Unmarshal(s.ValueType())
	if err != nil {
		return nil
	}
	return plain(s.Block, tftypes.NewAttributePath(), v)
}
