package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
)

// nodeImageModel is gpucluster_node_image's state.
type nodeImageModel struct {
	ID                  types.String   `tfsdk:"id"`
	Name                types.String   `tfsdk:"name"`
	Role                types.String   `tfsdk:"role"`
	NetworkID           types.String   `tfsdk:"network_id"`
	BuilderInstanceType types.String   `tfsdk:"builder_instance_type"`
	BaseImageID         types.String   `tfsdk:"base_image_id"`
	Versions            types.Object   `tfsdk:"versions"`
	ImageRegistry       types.String   `tfsdk:"image_registry"`
	PackageMirror       types.String   `tfsdk:"package_mirror"`
	NVSwitch            types.Bool     `tfsdk:"nvswitch"`
	ERDMA               types.Bool     `tfsdk:"erdma"`
	HostCUDA            types.Bool     `tfsdk:"host_cuda"`
	NFSClient           types.Bool     `tfsdk:"nfs_client"`
	Images              types.List     `tfsdk:"images"`
	CopyToRegions       types.List     `tfsdk:"copy_to_regions"`
	Tags                types.Map      `tfsdk:"tags"`
	ContentDigest       types.String   `tfsdk:"content_digest"`
	Copies              types.Map      `tfsdk:"copies"`
	Timeouts            timeouts.Value `tfsdk:"timeouts"`
}

// defaultBakedImages are what an image pre-pulls unless images is set: what every GPU node runs
// before any workload, the pod sandbox, the pod network and the GPU DaemonSets.
var defaultBakedImages = []string{images.Pause, images.Flannel, images.FlannelCNIPlugin, images.DevicePlugin, images.DCGMExporter, images.NodeExporter}

// defaultControlPlaneImages are what a control-plane image pre-pulls unless images is set: the pod
// sandbox, the pod network and the node exporter (it tolerates every taint); kubeadm's own images
// come with the role (bootstrap.BakeOptions.ControlPlaneImagesPull).
var defaultControlPlaneImages = []string{images.Pause, images.Flannel, images.FlannelCNIPlugin, images.NodeExporter}

// bakeOptions is what the image holds, from the plan; registry is image_registry resolved (the
// region's default when unset) and mirror package_mirror resolved.
func (m *nodeImageModel) bakeOptions(ctx context.Context, region, registry, mirror string) (bootstrap.BakeOptions, diag.Diagnostics) {
	var diags diag.Diagnostics
	b := bootstrap.BakeOptions{Role: m.Role.ValueString(), ImageRegistry: registry, PackageMirror: mirror, Region: region,
		NVSwitch: m.NVSwitch.ValueBool(), ERDMA: m.ERDMA.ValueBool(), HostCUDA: m.HostCUDA.ValueBool(),
		NFS: m.NFSClient.IsNull() || m.NFSClient.ValueBool()}
	if !m.Versions.IsNull() && !m.Versions.IsUnknown() {
		var bv bootstrapVersions
		diags.Append(m.Versions.As(ctx, &bv, basetypes.ObjectAsOptions{})...)
		b.Versions = bootstrap.Versions{Driver: bv.Driver.ValueString(), CUDA: bv.CUDA.ValueString(), NCCL: bv.NCCL.ValueString(), Kubernetes: bv.Kubernetes.ValueString()}
	}
	if m.Images.IsNull() || m.Images.IsUnknown() {
		defaults := defaultBakedImages
		if b.Role == bootstrap.RoleControlPlane {
			defaults = defaultControlPlaneImages
		}
		for _, name := range defaults {
			b.Images = append(b.Images, images.RefIn(name, registry))
		}
	} else {
		diags.Append(m.Images.ElementsAs(ctx, &b.Images, false)...)
	}
	return b, diags
}

// contentDigest identifies what goes into an image: the bake options with the versions
// defaulted (so a new default driver is a new image) and the base image when it is set (an
// unset base image is the newest Ubuntu 22.04 at create, which must not replace the image each
// time the vendor publishes one).
func contentDigest(b bootstrap.BakeOptions, baseImage string) string {
	b.Versions = b.Versions.WithDefaults()
	raw, _ := json.Marshal(struct {
		Bake bootstrap.BakeOptions
		Base string `json:",omitempty"`
	}{b, baseImage})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])[:16]
}

// resolveBuilder fills what the configuration leaves to the catalog: nvswitch from the builder's
// type, and the builder's type from what the image is baked for (catalog.ImageBuilderType). It
// answers false with the error in diags for a type the catalog does not know.
func resolveBuilder(plan, cfg *nodeImageModel, diags *diag.Diagnostics) bool {
	if plan.Role.ValueString() == bootstrap.RoleControlPlane {
		// No GPU software: any type builds it, the smallest CPU one unless set; no Fabric Manager.
		if cfg.BuilderInstanceType.IsNull() {
			plan.BuilderInstanceType = types.StringValue(catalog.ControlPlaneImageBuilderType().Name)
		}
		if cfg.NVSwitch.IsNull() {
			plan.NVSwitch = types.BoolValue(false)
		}
		return true
	}
	if !cfg.BuilderInstanceType.IsNull() {
		t, err := catalog.ParseInstanceType(cfg.BuilderInstanceType.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root("builder_instance_type"), fmt.Sprintf("Unknown instance type %q", cfg.BuilderInstanceType.ValueString()),
				"builder_instance_type: "+strings.TrimSuffix(err.Error(), ".")+". Use a GPU type from the catalog (data source gpucluster_gpu_catalog), or leave it unset for the smallest one that fits.")
			return false
		}
		if !t.IsGPU() {
			diags.AddAttributeError(path.Root("builder_instance_type"), fmt.Sprintf("%s has no GPU", t.Name),
				"builder_instance_type: the builder loads the NVIDIA driver and runs nvidia-smi, which needs a GPU. Use a GPU type, or leave builder_instance_type unset.")
			return false
		}
		if cfg.NVSwitch.IsNull() {
			plan.NVSwitch = types.BoolValue(t.NVSwitch)
		}
		return true
	}
	nvswitch := cfg.NVSwitch.ValueBool()
	plan.NVSwitch = types.BoolValue(nvswitch)
	// Computed again at each plan: it changes only with nvswitch or erdma, which replace the image.
	t, err := catalog.ImageBuilderType(nvswitch, cfg.ERDMA.ValueBool())
	if err != nil {
		diags.AddAttributeError(path.Root("builder_instance_type"), "No builder instance type", err.Error()+" Set builder_instance_type.")
		return false
	}
	plan.BuilderInstanceType = types.StringValue(t.Name)
	return true
}
