package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
)

var _ function.Function = (*scenarioCheckFunction)(nil)

func newScenarioCheckFunction() function.Function { return &scenarioCheckFunction{} }

// scenarioCheckFunction is provider::gpucluster::scenario_check(scenario, instance_type,
// node_count): the catalog's findings for one instance type in one scenario, grouped by
// severity, for preconditions and check blocks.
type scenarioCheckFunction struct{}

// scenarioCheckResultTypes is the shape of the returned object.
var scenarioCheckResultTypes = map[string]attr.Type{
	"errors":   types.ListType{ElemType: types.StringType},
	"warnings": types.ListType{ElemType: types.StringType},
	"info":     types.ListType{ElemType: types.StringType},
}

func (f *scenarioCheckFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "scenario_check"
}

func (f *scenarioCheckFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Check an instance type against a research scenario",
		MarkdownDescription: "Checks `instance_type` for `scenario` on `node_count` nodes and returns the findings as " +
			"`{ errors, warnings, info }`, each a list of strings `[code]: message (required: ...; measured: ...) Hint: ...`. " +
			"Errors mean the combination cannot work, warnings that it misses a scenario target, info is worth knowing. " +
			"The type is checked as the provider deploys it, the same assumption `gpucluster_scenario` ranks with: SCC types " +
			"get an HPC cluster, and types with elastic RDMA interfaces get eRDMA when the scenario needs RDMA between " +
			"several nodes. Fails for an unknown scenario or instance type. Typical use: " +
			"`length(provider::gpucluster::scenario_check(...).errors) == 0` in a precondition.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "scenario",
				MarkdownDescription: "Scenario, one of " + mdValues(catalog.ScenarioNames()) + ".",
			},
			function.StringParameter{
				Name:                "instance_type",
				MarkdownDescription: "Instance type, with or without the `ecs.` prefix, such as `ecs.gn7e-c16g1.32xlarge`.",
			},
			function.Int64Parameter{
				Name:                "node_count",
				MarkdownDescription: "Number of nodes, at least 1.",
			},
		},
		Return: function.ObjectReturn{AttributeTypes: scenarioCheckResultTypes},
	}
}

func (f *scenarioCheckFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var scenario, instanceType string
	var nodes int64
	resp.Error = function.ConcatFuncErrors(resp.Error, req.Arguments.Get(ctx, &scenario, &instanceType, &nodes))
	if resp.Error != nil {
		return
	}
	findings, funcErr := scenarioCheck(scenario, instanceType, nodes)
	if funcErr != nil {
		resp.Error = funcErr
		return
	}
	groups := map[catalog.Severity][]attr.Value{}
	for _, fd := range findings {
		groups[fd.Severity] = append(groups[fd.Severity], types.StringValue(findingText(fd)))
	}
	values := map[string]attr.Value{}
	for name, sev := range map[string]catalog.Severity{"errors": catalog.SeverityError, "warnings": catalog.SeverityWarning, "info": catalog.SeverityInfo} {
		list, diags := types.ListValue(types.StringType, append([]attr.Value{}, groups[sev]...))
		if diags.HasError() {
			resp.Error = function.FuncErrorFromDiags(ctx, diags)
			return
		}
		values[name] = list
	}
	obj, diags := types.ObjectValue(scenarioCheckResultTypes, values)
	if diags.HasError() {
		resp.Error = function.FuncErrorFromDiags(ctx, diags)
		return
	}
	resp.Error = function.ConcatFuncErrors(resp.Error, resp.Result.Set(ctx, obj))
}

// scenarioCheck runs catalog.Check under the deployment the provider makes (see Definition).
// Error texts end without a period: OpenTofu and Terraform add one.
func scenarioCheck(scenario, instanceType string, nodes int64) ([]catalog.Finding, *function.FuncError) {
	sc, err := catalog.LookupScenario(scenario)
	if err != nil {
		return nil, function.NewArgumentFuncError(0, fmt.Sprintf("scenario_check: %v", err))
	}
	t, err := catalog.ParseInstanceType(instanceType)
	if err != nil {
		return nil, function.NewArgumentFuncError(1, fmt.Sprintf("scenario_check: %v. Use a name from the gpucluster_gpu_catalog data source", err))
	}
	if nodes < 1 {
		return nil, function.NewArgumentFuncError(2, fmt.Sprintf("scenario_check: node_count must be at least 1, got %d", nodes))
	}
	opts := catalog.CheckOptions{
		Nodes:      int(nodes),
		HPCCluster: t.RequiresHPCCluster,
		ERDMA:      t.ERI && nodes > 1 && sc.NeedsInterNodeRDMA,
	}
	findings, err := catalog.Check(sc.Name, t.Name, opts)
	if err != nil {
		if errors.Is(err, catalog.ErrUnknownInstanceType) {
			return nil, function.NewArgumentFuncError(1, "scenario_check: "+err.Error())
		}
		return nil, function.NewFuncError("scenario_check: " + err.Error())
	}
	return findings, nil
}
