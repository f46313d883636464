package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodeimage"
)

// nodeImageSystemDiskGiB is the builder's system disk, and so the image's: the OS (about 5 GB),
// the driver and its DKMS build, containerd with the pre-pulled images (a few GB) and room for
// the nodes' own logs and images.
const nodeImageSystemDiskGiB = 100

// spec is the bake of the planned image: the builder in the network's first zone, from the base
// image (the newest Ubuntu 22.04 when unset), with the bootstrap's builder user data.
func (r *nodeImageResource) spec(ctx context.Context, plan *nodeImageModel) (nodeimage.Spec, diag.Diagnostics) {
	var diags diag.Diagnostics
	region := r.client.Region()
	b, d := plan.bakeOptions(ctx, region, plan.ImageRegistry.ValueString(), plan.PackageMirror.ValueString())
	diags.Append(d...)
	if diags.HasError() {
		return nodeimage.Spec{}, diags
	}
	doc, err := bootstrap.RenderBake(b)
	if err != nil {
		addPlanError(&diags, err, "Node image settings")
		return nodeimage.Spec{}, diags
	}
	net, err := loadPoolNetwork(ctx, r.client, plan.NetworkID.ValueString())
	if err != nil {
		diags.AddError("Reading the builder's network", err.Error())
		return nodeimage.Spec{}, diags
	}
	if len(net.Zones) == 0 {
		diags.AddError("Reading the builder's network", fmt.Sprintf("network %s has no vSwitch for the builder", net.ID))
		return nodeimage.Spec{}, diags
	}
	base := plan.BaseImageID.ValueString()
	if plan.BaseImageID.IsUnknown() || base == "" {
		img, err := r.client.NewestPublicImage(ctx, cloud.UbuntuFamily)
		if err != nil {
			diags.AddError("Finding the newest Ubuntu 22.04 image", err.Error())
			return nodeimage.Spec{}, diags
		}
		base = img.ID
	}
	regions, d := listOf(ctx, plan.CopyToRegions)
	diags.Append(d...)
	tags, d := mapOf(ctx, plan.Tags)
	diags.Append(d...)
	zone := net.Zones[0]
	return nodeimage.Spec{
		Name: plan.Name.ValueString(), Family: "gpucluster-node", Description: "Kubernetes node image (" + b.Role + ") baked by terraform-provider-gpucluster",
		Content: plan.ContentDigest.ValueString(), BaseImageID: base, InstanceType: plan.BuilderInstanceType.ValueString(),
		ZoneID: zone, VSwitchID: net.VSwitchIDs[zone], SecurityGroupID: net.SecurityGroupID, SystemDiskGiB: nodeImageSystemDiskGiB,
		UserData: bootstrap.PackUserData(doc), CopyTo: regions, Tags: tags,
	}, diags
}

// retagImages brings the image's user tags from had to want (the copies keep the tags they
// were copied with: CopyImage set them, and tagging them would take a call per region).
func retagImages(ctx context.Context, c *cloud.Client, id string, had, want map[string]string) error {
	var gone []string
	for _, k := range slices.Sorted(maps.Keys(had)) {
		if _, ok := want[k]; !ok {
			gone = append(gone, k)
		}
	}
	if err := c.UntagResources(ctx, cloud.KindImage, []string{id}, gone); err != nil {
		return err
	}
	return c.TagResources(ctx, cloud.KindImage, []string{id}, want)
}

// deleteNodeImage deletes the image, its copies and any builder left.
func deleteNodeImage(ctx context.Context, c *cloud.Client, state *nodeImageModel) error {
	copies, d := mapOf(ctx, state.Copies)
	if d.HasError() {
		return fmt.Errorf("reading copies from state")
	}
	s := nodeimage.Spec{Name: state.Name.ValueString(), Content: state.ContentDigest.ValueString()}
	return nodeimage.Delete(ctx, c, s, nodeimage.Result{ImageID: state.ID.ValueString(), Copies: copies})
}
