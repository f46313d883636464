package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
)

var _ function.Function = (*instanceTypeForFunction)(nil)

func newInstanceTypeForFunction() function.Function { return &instanceTypeForFunction{} }

// instanceTypeForFunction is provider::gpucluster::instance_type_for(gpu_model, gpus_per_node):
// the best catalog instance type for a GPU model and GPU count, scenario-neutral
// (catalog.InstanceTypeFor). It is pure, so OpenTofu can evaluate it at validate time.
type instanceTypeForFunction struct{}

func (f *instanceTypeForFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "instance_type_for"
}

func (f *instanceTypeForFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Instance type for a GPU model and a GPU count",
		MarkdownDescription: "Returns the best Alibaba Cloud instance type (with the `ecs.` prefix) that has exactly `gpus_per_node` " +
			"GPUs of `gpu_model`, from the provider's catalog, without regard to a scenario: the newest GPU of the model's " +
			"families first, then fewer vCPUs and less memory. Models no family offers by name use the same substitutes as " +
			"`gpucluster_scenario` (`H100` -> gn8v / ebmgn8v, `A40` -> gn8is / gn7i, `V100S` -> gn6e / gn6v). Fails, naming the " +
			"known models or the GPU counts that exist, when there is no such type. Use `gpucluster_scenario` to choose by workload.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name: "gpu_model",
				MarkdownDescription: "GPU model, case-insensitive, aliases accepted. Known models: " + mdValues(catalog.GPUModelNames()) +
					". Bare `A100` and `V100` mean the whole series.",
			},
			function.Int64Parameter{
				Name:                "gpus_per_node",
				MarkdownDescription: "GPUs per instance, such as 1, 2, 4 or 8.",
			},
		},
		Return: function.StringReturn{},
	}
}

func (f *instanceTypeForFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var model string
	var gpus int64
	resp.Error = function.ConcatFuncErrors(resp.Error, req.Arguments.Get(ctx, &model, &gpus))
	if resp.Error != nil {
		return
	}
	if gpus < 1 {
		resp.Error = function.NewArgumentFuncError(1, fmt.Sprintf("instance_type_for: gpus_per_node must be at least 1, got %d", gpus))
		return
	}
	t, err := catalog.InstanceTypeFor(model, int(gpus))
	if err != nil {
		resp.Error = instanceTypeForError(model, gpus, err)
		return
	}
	resp.Error = function.ConcatFuncErrors(resp.Error, resp.Result.Set(ctx, t.Name))
}

// instanceTypeForError points the error at the argument that caused it and says what to change.
// Texts end without a period: OpenTofu and Terraform add one.
func instanceTypeForError(model string, gpus int64, err error) *function.FuncError {
	text := fmt.Sprintf("instance_type_for(%q, %d): %v", model, gpus, err)
	switch {
	case errors.Is(err, catalog.ErrUnknownGPUModel):
		return function.NewArgumentFuncError(0, text+". Pass one of the known models")
	case errors.Is(err, catalog.ErrGPUCountNotOffered):
		return function.NewArgumentFuncError(1, text+". Pass a GPU count that exists for one of these families")
	}
	return function.NewFuncError(strings.TrimSpace(text))
}
