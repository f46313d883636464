package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

var _ datasource.DataSourceWithConfigure = (*nodeRegistrationDataSource)(nil)

func newNodeRegistrationDataSource() datasource.DataSource { return &nodeRegistrationDataSource{} }

// nodeRegistrationDataSource reads what an instance will register with Kubernetes from the user
// data ECS holds for it (DescribeUserData): the check that what a pool or a module reports
// (node_labels, node_taints) is what the node's kubelet really gets, made against the cloud
// rather than against the provider's own intent.
type nodeRegistrationDataSource struct {
	client *cloud.Client
}

func (d *nodeRegistrationDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_registration"
}

func (d *nodeRegistrationDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "What a node of a `gpucluster_node_pool` registers with Kubernetes, read back from the user data " +
			"ECS holds for the instance (`DescribeUserData`), or, when that is a bootstrap bundle's stub (`bootstrap_bundle`), from the " +
			"bundle it names (OSS `GetObject` with the provider's credentials, its digest checked): the kubeadm action, the endpoint it joins, the CA pins, and the " +
			"labels and taints its kubelet registers with. Use it to check that a pool's `node_labels`/`node_taints` (or a " +
			"module's outputs) are what the nodes get. The join token is never exposed.",
		Attributes: map[string]schema.Attribute{
			"instance_id": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The ECS instance, a node of a pool with the built-in bootstrap (for example `gpucluster_node_pool.x.nodes[0].id`).",
			},
			"action": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "What kubeadm does on the node: `init` (the first control-plane node), `join_control_plane` or `join`.",
			},
			"api_endpoint": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The API endpoint: the `controlPlaneEndpoint` of an `init` node, the `apiServerEndpoint` a joining node discovers the cluster at.",
			},
			"ca_cert_hashes": schema.ListAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "The CA hashes a joining node pins (`sha256:<hex>`); empty for `init` or when verification is skipped.",
			},
			"skips_ca_verification": schema.BoolAttribute{
				Computed:            true,
				MarkdownDescription: "True when the node joins with kubeadm's `unsafeSkipCAVerification` (the pool's `insecure_skip_ca_verification`).",
			},
			"labels": schema.MapAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "The labels the kubelet registers the node with.",
			},
			"taints": schema.ListAttribute{
				Computed:    true,
				ElementType: types.StringType,
				MarkdownDescription: "The taints the node registers with, as `key=value:Effect` or `key:Effect` (the form of `node_taints`); " +
					"a control-plane node also has kubeadm's `node-role.kubernetes.io/control-plane:NoSchedule`.",
			},
			"pod_subnet": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The cluster's pod CIDR, on an `init` node; empty otherwise.",
			},
		},
	}
}

func (d *nodeRegistrationDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFromProviderData(req.ProviderData, &resp.Diagnostics)
}

type nodeRegistrationModel struct {
	InstanceID          string            `tfsdk:"instance_id"`
	Action              string            `tfsdk:"action"`
	APIEndpoint         string            `tfsdk:"api_endpoint"`
	CACertHashes        []string          `tfsdk:"ca_cert_hashes"`
	SkipsCAVerification bool              `tfsdk:"skips_ca_verification"`
	Labels              map[string]string `tfsdk:"labels"`
	Taints              []string          `tfsdk:"taints"`
	PodSubnet           string            `tfsdk:"pod_subnet"`
}

func (d *nodeRegistrationDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var state nodeRegistrationModel
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("instance_id"), &state.InstanceID)...)
	if resp.Diagnostics.HasError() || !clientConfigured(d.client, "Reading a node's registration", &resp.Diagnostics) {
		return
	}
	userData, err := d.client.UserData(ctx, state.InstanceID)
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Reading the user data of instance %s", state.InstanceID), err.Error())
		return
	}
	reg, err := registrationOf(ctx, d.client, userData)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("instance_id"), "Instance without the node bootstrap",
			fmt.Sprintf("instance_id = %q: its user data is not what gpucluster_node_pool's bootstrap writes (%v). "+
				"Give a node of a pool whose bootstrap is on.", state.InstanceID, err))
		return
	}
	state.Action, state.APIEndpoint, state.PodSubnet = reg.Action, reg.APIEndpoint, reg.PodSubnet
	state.CACertHashes = append([]string{}, reg.CACertHashes...)
	state.SkipsCAVerification = reg.SkipsCAVerification
	state.Labels, state.Taints = reg.Labels, append([]string{}, reg.TaintStrings()...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// registrationOf reads a node's registration from its user data, or, when the user data is a
// bootstrap bundle's stub, from the bundle it names (read with the provider's credentials, its
// digest checked), whose files the node's bootstrap writes over the stub's.
func registrationOf(ctx context.Context, c *cloud.Client, userData string) (bootstrap.Registration, error) {
	spec, stub, err := bundle.SpecOfUserData(userData)
	if err != nil || !stub {
		return bootstrap.ParseRegistration(userData)
	}
	archive, err := c.GetObject(ctx, spec.Bucket, spec.Key)
	if err != nil {
		return bootstrap.Registration{}, fmt.Errorf("the user data is a bootstrap bundle's stub; its bundle: %w", err)
	}
	bundled, err := bundle.Unpack(archive, spec.Digest)
	if err != nil {
		return bootstrap.Registration{}, fmt.Errorf("the user data is a bootstrap bundle's stub; its bundle %s: %w", spec.Key, err)
	}
	files, err := bootstrap.DocumentFiles(userData)
	if err != nil {
		return bootstrap.Registration{}, err
	}
	for p, f := range bundled {
		files[p] = string(f.Content)
	}
	return bootstrap.RegistrationOfFiles(files)
}
