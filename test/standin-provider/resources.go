package main

import (
	"context"

	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func (p *provider) ValidateResourceTypeConfig(_ context.Context, req *tfprotov5.ValidateResourceTypeConfigRequest) (*tfprotov5.ValidateResourceTypeConfigResponse, error) {
	s, vals, diags := p.resource(p.resources, req.TypeName, req.Config)
	if diags == nil {
		p.log.record(Call{Call: "ValidateResourceConfig", Type: req.TypeName, Values: plain(s.Block, tftypes.NewAttributePath(), vals[0])})
	}
	return &tfprotov5.ValidateResourceTypeConfigResponse{Diagnostics: diags}, nil
}

// UpgradeResourceState reads the stored state as it is (the schema has one version).
func (p *provider) UpgradeResourceState(_ context.Context, req *tfprotov5.UpgradeResourceStateRequest) (*tfprotov5.UpgradeResourceStateResponse, error) {
	s, ok := p.resources[req.TypeName]
	if !ok {
		return &tfprotov5.UpgradeResourceStateResponse{Diagnostics: diag("no schema for %s", req.TypeName)}, nil
	}
	v, err := req.RawState.UnmarshalWithOpts(s.ValueType(), tfprotov5.UnmarshalOpts{ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}})
	if err != nil {
		return &tfprotov5.UpgradeResourceStateResponse{Diagnostics: diag("read the state of %s: %v", req.TypeName, err)}, nil
	}
	dv, diags := encode(s, v)
	return &tfprotov5.UpgradeResourceStateResponse{UpgradedState: dv, Diagnostics: diags}, nil
}

// ReadResource returns the stored state: the stand-in's cloud never drifts.
func (p *provider) ReadResource(_ context.Context, req *tfprotov5.ReadResourceRequest) (*tfprotov5.ReadResourceResponse, error) {
	p.log.record(Call{Call: "ReadResource", Type: req.TypeName})
	return &tfprotov5.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private}, nil
}

// PlanResourceChange plans the configuration, with computed attributes it has no value
// for unknown, and a replacement where a replacing argument changes.
func (p *provider) PlanResourceChange(_ context.Context, req *tfprotov5.PlanResourceChangeRequest) (*tfprotov5.PlanResourceChangeResponse, error) {
	s, vals, diags := p.resource(p.resources, req.TypeName, req.PriorState, req.ProposedNewState)
	if diags != nil {
		return &tfprotov5.PlanResourceChangeResponse{Diagnostics: diags}, nil
	}
	prior, proposed := vals[0], vals[1]
	if proposed.IsNull() {
		p.log.record(Call{Call: "PlanResourceChange", Type: req.TypeName, Action: "delete"})
		return &tfprotov5.PlanResourceChangeResponse{PlannedState: req.ProposedNewState}, nil
	}
	planned, err := unknownComputed(s.Block, prior, proposed)
	if err != nil {
		return &tfprotov5.PlanResourceChangeResponse{Diagnostics: diag("plan %s: %v", req.TypeName, err)}, nil
	}
	// as the SDK the real providers are built with: terraform then takes a computed
	// block the configuration leaves out
	//lint:ignore SA1019 the real google and azurerm providers (SDKv2) set it, and terraform plans their computed blocks by it
	resp := &tfprotov5.PlanResourceChangeResponse{UnsafeToUseLegacyTypeSystem: true}
	call := Call{Call: "PlanResourceChange", Type: req.TypeName, Action: "create"}
	if !prior.IsNull() {
		resp.RequiresReplace = replacePaths(req.TypeName, prior, planned)
		call.Action = action(prior, planned, resp.RequiresReplace)
		for _, r := range resp.RequiresReplace {
			call.Replace = append(call.Replace, r.String())
		}
	}
	call.Values = plain(s.Block, tftypes.NewAttributePath(), planned)
	p.log.record(call)
	resp.PlannedState, resp.Diagnostics = encode(s, planned)
	return resp, nil
}

func action(prior, planned tftypes.Value, replace []*tftypes.AttributePath) string {
	switch {
	case len(replace) > 0:
		return "replace"
	case prior.Equal(planned):
		return "no-op"
	}
	return "update"
}

// ApplyResourceChange stores the planned state with every unknown value made known
// (deterministically), or nothing for a delete.
func (p *provider) ApplyResourceChange(_ context.Context, req *tfprotov5.ApplyResourceChangeRequest) (*tfprotov5.ApplyResourceChangeResponse, error) {
	s, vals, diags := p.resource(p.resources, req.TypeName, req.PriorState, req.PlannedState)
	if diags != nil {
		return &tfprotov5.ApplyResourceChangeResponse{Diagnostics: diags}, nil
	}
	prior, planned := vals[0], vals[1]
	if planned.IsNull() { // the state deleted is logged, so a test can tell whose it was
		p.log.record(Call{Call: "ApplyResourceChange", Type: req.TypeName, Action: "delete", Values: plain(s.Block, tftypes.NewAttributePath(), prior)})
		return &tfprotov5.ApplyResourceChangeResponse{NewState: req.PlannedState}, nil
	}
	done, err := fillUnknown(s.Block, req.TypeName, stringAttr(planned, "name"), planned, false)
	if err != nil {
		return &tfprotov5.ApplyResourceChangeResponse{Diagnostics: diag("apply %s: %v", req.TypeName, err)}, nil
	}
	act := "create"
	if !prior.IsNull() {
		act = "update"
	}
	p.log.record(Call{Call: "ApplyResourceChange", Type: req.TypeName, Action: act, Values: plain(s.Block, tftypes.NewAttributePath(), done)})
	//lint:ignore SA1019 as in PlanResourceChange: the real providers set it
	resp := &tfprotov5.ApplyResourceChangeResponse{Private: req.PlannedPrivate, UnsafeToUseLegacyTypeSystem: true}
	resp.NewState, resp.Diagnostics = encode(s, done)
	return resp, nil
}

// ImportResourceState imports a resource as its id alone; the next plan fills in the rest.
func (p *provider) ImportResourceState(_ context.Context, req *tfprotov5.ImportResourceStateRequest) (*tfprotov5.ImportResourceStateResponse, error) {
	s, ok := p.resources[req.TypeName]
	if !ok {
		return &tfprotov5.ImportResourceStateResponse{Diagnostics: diag("no schema for %s", req.TypeName)}, nil
	}
	p.log.record(Call{Call: "ImportResourceState", Type: req.TypeName, ID: req.ID})
	obj := s.ValueType().(tftypes.Object)
	attrs := map[string]tftypes.Value{}
	for n, t := range obj.AttributeTypes {
		attrs[n] = tftypes.NewValue(t, nil)
	}
	if _, ok := obj.AttributeTypes["id"]; ok {
		attrs["id"] = tftypes.NewValue(tftypes.String, req.ID)
	}
	dv, diags := encode(s, tftypes.NewValue(obj, attrs))
	return &tfprotov5.ImportResourceStateResponse{ImportedResources: []*tfprotov5.ImportedResource{{TypeName: req.TypeName, State: dv}}, Diagnostics: diags}, nil
}

func (p *provider) MoveResourceState(context.Context, *tfprotov5.MoveResourceStateRequest) (*tfprotov5.MoveResourceStateResponse, error) {
	return &tfprotov5.MoveResourceStateResponse{Diagnostics: diag("moving state between resource types is not supported")}, nil
}

func (p *provider) UpgradeResourceIdentity(context.Context, *tfprotov5.UpgradeResourceIdentityRequest) (*tfprotov5.UpgradeResourceIdentityResponse, error) {
	return &tfprotov5.UpgradeResourceIdentityResponse{Diagnostics: diag("resource identities are not supported")}, nil
}

func (p *provider) GenerateResourceConfig(context.Context, *tfprotov5.GenerateResourceConfigRequest) (*tfprotov5.GenerateResourceConfigResponse, error) {
	return &tfprotov5.GenerateResourceConfigResponse{Diagnostics: diag("generating configuration is not supported")}, nil
}

func (p *provider) ValidateDataSourceConfig(_ context.Context, req *tfprotov5.ValidateDataSourceConfigRequest) (*tfprotov5.ValidateDataSourceConfigResponse, error) {
	_, _, diags := p.resource(p.data, req.TypeName, req.Config)
	p.log.record(Call{Call: "ValidateDataResourceConfig", Type: req.TypeName})
	return &tfprotov5.ValidateDataSourceConfigResponse{Diagnostics: diags}, nil
}

// ReadDataSource answers with the configuration and deterministic computed values.
func (p *provider) ReadDataSource(_ context.Context, req *tfprotov5.ReadDataSourceRequest) (*tfprotov5.ReadDataSourceResponse, error) {
	s, vals, diags := p.resource(p.data, req.TypeName, req.Config)
	if diags != nil {
		return &tfprotov5.ReadDataSourceResponse{Diagnostics: diags}, nil
	}
	v, err := fillUnknown(s.Block, req.TypeName, "", vals[0], true)
	if err != nil {
		return &tfprotov5.ReadDataSourceResponse{Diagnostics: diag("read %s: %v", req.TypeName, err)}, nil
	}
	p.log.record(Call{Call: "ReadDataSource", Type: req.TypeName, Values: plain(s.Block, tftypes.NewAttributePath(), v)})
	resp := &tfprotov5.ReadDataSourceResponse{}
	resp.State, resp.Diagnostics = encode(s, v)
	return resp, nil
}
