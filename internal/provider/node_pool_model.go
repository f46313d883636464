package provider

import (
	"context"
	"regexp"
	"slices"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

var (
	poolIDPattern   = regexp.MustCompile(`^np-[0-9a-f]{12}$`)
	poolNamePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]*$`)
	taintPattern    = regexp.MustCompile(`^[A-Za-z0-9./_-]+(=[A-Za-z0-9._-]*)?:(NoSchedule|PreferNoSchedule|NoExecute)$`)
)

type nodePoolModel struct {
	ID                   types.String   `tfsdk:"id"`
	Name                 types.String   `tfsdk:"name"`
	NetworkID            types.String   `tfsdk:"network_id"`
	Scenario             types.String   `tfsdk:"scenario"`
	GPUModel             types.String   `tfsdk:"gpu_model"`
	GPUsPerNode          types.Int64    `tfsdk:"gpus_per_node"`
	InstanceType         types.String   `tfsdk:"instance_type"`
	Size                 types.Int64    `tfsdk:"size"`
	Autoscaling          types.Object   `tfsdk:"autoscaling"`
	ScalingGroupID       types.String   `tfsdk:"scaling_group_id"`
	MinSize              types.Int64    `tfsdk:"min_size"`
	ZoneIDs              types.List     `tfsdk:"zone_ids"`
	InstanceTypeFallback types.Bool     `tfsdk:"instance_type_fallback"`
	ImageID              types.String   `tfsdk:"image_id"`
	RAMRoleName          types.String   `tfsdk:"ram_role_name"`
	SystemDisk           types.Object   `tfsdk:"system_disk"`
	DataDisks            types.List     `tfsdk:"data_disks"`
	Spot                 types.Object   `tfsdk:"spot"`
	AutoReleaseAfter     types.String   `tfsdk:"auto_release_after"`
	Kubernetes           types.Object   `tfsdk:"kubernetes"`
	NodeLabels           types.Map      `tfsdk:"node_labels"`
	NodeTaints           types.List     `tfsdk:"node_taints"`
	Mounts               types.List     `tfsdk:"mounts"`
	Bootstrap            types.Bool     `tfsdk:"bootstrap"`
	PackageMirror        types.String   `tfsdk:"package_mirror"`
	UserData             types.String   `tfsdk:"user_data"`
	BootstrapBundle      types.Object   `tfsdk:"bootstrap_bundle"`
	BootstrapBundleKey   types.String   `tfsdk:"bootstrap_bundle_key"`
	UpdateStrategy       types.Object   `tfsdk:"update_strategy"`
	Tags                 types.Map      `tfsdk:"tags"`
	Nodes                types.List     `tfsdk:"nodes"`
	GPUCount             types.Int64    `tfsdk:"gpu_count"`
	Findings             types.List     `tfsdk:"findings"`
	EstimatedHourlyPrice types.Float64  `tfsdk:"estimated_hourly_price"`
	Acceptance           types.Object   `tfsdk:"acceptance"`
	AcceptanceResults    types.Object   `tfsdk:"acceptance_results"`
	Timeouts             timeouts.Value `tfsdk:"timeouts"`
}

type diskModel struct {
	Category         types.String `tfsdk:"category"`
	PerformanceLevel types.String `tfsdk:"performance_level"`
	SizeGiB          types.Int64  `tfsdk:"size_gib"`
}

type spotModel struct {
	Strategy       types.String  `tfsdk:"strategy"`
	MaxHourlyPrice types.Float64 `tfsdk:"max_hourly_price"`
}

type k8sModel struct {
	Role        types.String `tfsdk:"role"`
	APIEndpoint types.String `tfsdk:"api_endpoint"`
	// APIServerName: the name the API is reached by, mapped to api_endpoint's address
	// (internal/bootstrap apiname.go); a control plane behind load_balancer_id takes the load
	// balancer's by default.
	APIServerName types.String `tfsdk:"api_server_name"`
	JoinToken     types.String `tfsdk:"join_token"`
	JoinTokenWO   types.String `tfsdk:"join_token_wo"`
	CACertHash    types.String `tfsdk:"ca_cert_hash"`
	PodSubnet     types.String `tfsdk:"pod_subnet"`
	// ImageRegistry: every container image from one registry (shared_image_registry.go).
	ImageRegistry types.String `tfsdk:"image_registry"`
	Labels        types.Map    `tfsdk:"labels"`
	Taints        types.List   `tfsdk:"taints"`
	// LoadBalancerID: a control plane's gpucluster_control_plane_endpoint, whose backend servers
	// the pool keeps equal to its running nodes.
	LoadBalancerID types.String `tfsdk:"load_balancer_id"`
	// ControlPlaneInit: the first control-plane pool (kubeadm init); false joins it. Unset on a
	// control plane means true.
	ControlPlaneInit           types.Bool   `tfsdk:"control_plane_init"`
	ControlPlaneSize           types.Int64  `tfsdk:"control_plane_size"`
	CertificateKey             types.String `tfsdk:"certificate_key"`
	CertificateKeyWO           types.String `tfsdk:"certificate_key_wo"`
	CACertPEM                  types.String `tfsdk:"ca_cert_pem"`
	CAKeyPEM                   types.String `tfsdk:"ca_key_pem"`
	CAKeyPEMWO                 types.String `tfsdk:"ca_key_pem_wo"`
	InsecureSkipCAVerification types.Bool   `tfsdk:"insecure_skip_ca_verification"`
	Addons                     types.Map    `tfsdk:"addons"`
	Versions                   types.Object `tfsdk:"versions"`
	NCCLEnv                    types.Map    `tfsdk:"nccl_env"`
	HostCUDA                   types.Bool   `tfsdk:"host_cuda"`
}

// joinsControlPlane reports whether the pool is a control-plane pool that joins the first one.
func (k *k8sModel) joinsControlPlane() bool {
	return k != nil && k.Role.ValueString() == bootstrap.RoleControlPlane && !k.ControlPlaneInit.IsNull() && !k.ControlPlaneInit.IsUnknown() && !k.ControlPlaneInit.ValueBool()
}

type updateModel struct {
	MaxUnavailable types.Int64  `tfsdk:"max_unavailable"`
	JoinTimeout    types.String `tfsdk:"join_timeout"`
	DrainTimeout   types.String `tfsdk:"drain_timeout"`
}

// poolNested holds the nested attributes decoded. They stay types.Object/types.List in the model
// because a whole object may be unknown at plan time (a pool in for_each over a variable, say),
// which a Go struct pointer cannot hold.
type poolNested struct {
	SystemDisk     *diskModel
	DataDisks      []diskModel
	Spot           *spotModel
	Kubernetes     *k8sModel
	UpdateStrategy *updateModel
	Autoscaling    *autoscalingModel
	// DataDisksUnknown: data_disks, or one of its disks, is not known yet (a conditional on
	// another resource's attribute, say) and DataDisks is empty. Disks decide no computed value
	// (type, findings, labels, zones), so the plan goes on without them; planSpec checks them at
	// apply, before any node is asked for.
	DataDisksUnknown bool
}

// nested decodes the nested attributes; known is false when one of them that the plan's computed
// values depend on is unknown as a whole (data_disks is not one: see DataDisksUnknown).
func (m *nodePoolModel) nested(ctx context.Context) (poolNested, bool, diag.Diagnostics) {
	var (
		n     poolNested
		diags diag.Diagnostics
	)
	known := true
	decode := func(obj types.Object, target any) {
		switch {
		case obj.IsUnknown():
			known = false
		case !obj.IsNull():
			diags.Append(obj.As(ctx, target, basetypes.ObjectAsOptions{})...)
		}
	}
	decode(m.SystemDisk, &n.SystemDisk)
	decode(m.Spot, &n.Spot)
	decode(m.Kubernetes, &n.Kubernetes)
	decode(m.UpdateStrategy, &n.UpdateStrategy)
	decode(m.Autoscaling, &n.Autoscaling)
	n.DataDisksUnknown = m.DataDisks.IsUnknown() || slices.ContainsFunc(m.DataDisks.Elements(), attr.Value.IsUnknown)
	if !n.DataDisksUnknown && !m.DataDisks.IsNull() {
		diags.Append(m.DataDisks.ElementsAs(ctx, &n.DataDisks, false)...)
	}
	return n, known, diags
}

// Attribute types of the nested objects, for null values (import).
var (
	diskAttrTypes   = map[string]attr.Type{"category": types.StringType, "performance_level": types.StringType, "size_gib": types.Int64Type}
	spotAttrTypes   = map[string]attr.Type{"strategy": types.StringType, "max_hourly_price": types.Float64Type}
	updateAttrTypes = map[string]attr.Type{"max_unavailable": types.Int64Type, "join_timeout": types.StringType, "drain_timeout": types.StringType}
	k8sAttrTypes    = map[string]attr.Type{
		"role": types.StringType, "api_endpoint": types.StringType, "api_server_name": types.StringType, "join_token": types.StringType, "join_token_wo": types.StringType, "ca_cert_hash": types.StringType,
		"pod_subnet": types.StringType, "image_registry": types.StringType, "load_balancer_id": types.StringType, "labels": types.MapType{ElemType: types.StringType}, "taints": types.ListType{ElemType: types.StringType},
		"control_plane_init": types.BoolType, "control_plane_size": types.Int64Type, "certificate_key": types.StringType, "certificate_key_wo": types.StringType, "ca_cert_pem": types.StringType, "ca_key_pem": types.StringType, "ca_key_pem_wo": types.StringType,
		"insecure_skip_ca_verification": types.BoolType, "addons": types.MapType{ElemType: types.StringType},
		"versions": types.ObjectType{AttrTypes: versionAttrTypes}, "nccl_env": types.MapType{ElemType: types.StringType},
		"host_cuda": types.BoolType,
	}
	versionAttrTypes = map[string]attr.Type{"driver": types.StringType, "cuda": types.StringType, "nccl": types.StringType, "kubernetes": types.StringType}
)

// Object types of the computed nested lists, written once so values and schema agree.
var (
	nodeObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"id": types.StringType, "zone_id": types.StringType, "private_ip": types.StringType,
		"status": types.StringType, "instance_type": types.StringType, "deployment_set_id": types.StringType,
		"replace_requested": types.StringType,
	}}
	findingObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"severity": types.StringType, "code": types.StringType, "requirement": types.StringType,
		"measured": types.StringType, "message": types.StringType, "hint": types.StringType,
	}}
)

// setNodes records the nodes and what follows from them (GPU count).
func (m *nodePoolModel) setNodes(_ context.Context, nodes []cloud.Instance) diag.Diagnostics {
	var diags diag.Diagnostics
	cloud.SortInstances(nodes)
	elems := make([]attr.Value, 0, len(nodes))
	gpus := 0
	for _, n := range nodes {
		obj, d := types.ObjectValue(nodeObjectType.AttrTypes, map[string]attr.Value{
			"id": types.StringValue(n.ID), "zone_id": types.StringValue(n.ZoneID), "private_ip": types.StringValue(n.PrivateIP),
			"status": types.StringValue(n.Status), "instance_type": types.StringValue(n.InstanceType),
			"deployment_set_id": types.StringValue(n.DeploymentSetID),
			"replace_requested": replaceRequest(n),
		})
		diags.Append(d...)
		elems = append(elems, obj)
		if it, ok := catalog.LookupInstanceType(n.InstanceType); ok {
			gpus += it.GPUs
		}
	}
	list, d := types.ListValue(nodeObjectType, elems)
	diags.Append(d...)
	m.Nodes = list
	m.GPUCount = types.Int64Value(int64(gpus))
	return diags
}

// nodesDrifted reports what a refresh found that the pool must repair: a node count other than
// size (nodes deleted behind Terraform's back) or a node that is not Running. Unknown nodes are
// not drift.
func (m *nodePoolModel) nodesDrifted(size int) bool {
	if m.Nodes.IsNull() || m.Nodes.IsUnknown() {
		return false
	}
	elems := m.Nodes.Elements()
	if len(elems) != size {
		return true
	}
	for _, e := range elems {
		obj, ok := e.(types.Object)
		if !ok {
			return true
		}
		if status, ok := obj.Attributes()["status"].(types.String); !ok || status.ValueString() != "Running" {
			return true
		}
	}
	return false
}

// nodeIDs are the ids of the nodes the model records (none when they are unknown).
func (m *nodePoolModel) nodeIDs() []string {
	if m.Nodes.IsNull() || m.Nodes.IsUnknown() {
		return nil
	}
	var ids []string
	for _, e := range m.Nodes.Elements() {
		if obj, ok := e.(types.Object); ok {
			if id, ok := obj.Attributes()["id"].(types.String); ok && id.ValueString() != "" {
				ids = append(ids, id.ValueString())
			}
		}
	}
	return ids
}

// replaceRequest is the reason the node's GPU health agent tagged it for replacement; null
// without the tag.
func replaceRequest(n cloud.Instance) types.String {
	if why, ok := n.Tags[tagging.ReplaceRequested]; ok {
		return types.StringValue(why)
	}
	return types.StringNull()
}

// replaceRequests are the nodes the model records that ask for a new instance, as id: reason.
func (m *nodePoolModel) replaceRequests() map[string]string {
	out := map[string]string{}
	if m.Nodes.IsNull() || m.Nodes.IsUnknown() {
		return out
	}
	for _, e := range m.Nodes.Elements() {
		obj, ok := e.(types.Object)
		if !ok {
			continue
		}
		attrs := obj.Attributes()
		id, _ := attrs["id"].(types.String)
		why, _ := attrs["replace_requested"].(types.String)
		if !why.IsNull() && !why.IsUnknown() {
			out[id.ValueString()] = why.ValueString()
		}
	}
	return out
}

// forgetNodes marks what depends on the nodes unknown: the plan then shows the repair, and the
// apply (Update) brings the pool back to its size.
func (m *nodePoolModel) forgetNodes() {
	m.Nodes = types.ListUnknown(nodeObjectType)
	m.GPUCount = types.Int64Unknown()
	m.EstimatedHourlyPrice = types.Float64Unknown()
	if !m.BootstrapBundle.IsNull() {
		m.BootstrapBundleKey = types.StringUnknown() // the apply uploads the bundle again
	}
}

func findingsList(fs []catalog.Finding) (types.List, diag.Diagnostics) {
	var diags diag.Diagnostics
	elems := make([]attr.Value, 0, len(fs))
	for _, f := range fs {
		obj, d := types.ObjectValue(findingObjectType.AttrTypes, map[string]attr.Value{
			"severity": types.StringValue(string(f.Severity)), "code": types.StringValue(f.Code),
			"requirement": types.StringValue(f.Requirement), "measured": types.StringValue(f.Measured),
			"message": types.StringValue(f.Message), "hint": types.StringValue(f.Hint),
		})
		diags.Append(d...)
		elems = append(elems, obj)
	}
	list, d := types.ListValue(findingObjectType, elems)
	diags.Append(d...)
	return list, diags
}

// importedPool rebuilds a pool's state from its nodes' tags, for `terraform import`.
func importedPool(ctx context.Context, id string, nodes []cloud.Instance) (*nodePoolModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	first := nodes[0]
	zones := map[string]bool{}
	for _, n := range nodes {
		zones[n.ZoneID] = true
	}
	zoneList := make([]string, 0, len(zones))
	for z := range zones {
		zoneList = append(zoneList, z)
	}
	sort.Strings(zoneList)
	user := userTags(first.Tags)
	m := &nodePoolModel{
		ID:                   types.StringValue(id),
		Name:                 types.StringValue(first.Tags[tagPoolName]),
		NetworkID:            types.StringValue(first.Tags[tagPoolNetwork]),
		Scenario:             types.StringValue(first.Tags[tagScenario]),
		GPUModel:             types.StringNull(),
		GPUsPerNode:          types.Int64Null(),
		InstanceType:         types.StringValue(first.InstanceType),
		Size:                 types.Int64Value(int64(len(nodes))),
		MinSize:              types.Int64Value(int64(len(nodes))),
		ZoneIDs:              stringList(zoneList),
		InstanceTypeFallback: types.BoolValue(false),
		ImageID:              types.StringValue(first.ImageID),
		AutoReleaseAfter:     types.StringNull(),
		UserData:             types.StringNull(),
		BootstrapBundle:      types.ObjectNull(bundleAttrTypes),
		BootstrapBundleKey:   types.StringNull(),
		NodeLabels:           types.MapNull(types.StringType),
		NodeTaints:           types.ListNull(types.StringType),
		Mounts:               types.ListNull(types.StringType),
		SystemDisk:           types.ObjectNull(diskAttrTypes),
		DataDisks:            types.ListNull(types.ObjectType{AttrTypes: diskAttrTypes}),
		Spot:                 types.ObjectNull(spotAttrTypes),
		Kubernetes:           types.ObjectNull(k8sAttrTypes),
		UpdateStrategy:       types.ObjectNull(updateAttrTypes),
		Autoscaling:          types.ObjectNull(autoscalingAttrTypes),
		Acceptance:           types.ObjectNull(acceptanceAttrTypes),
		AcceptanceResults:    types.ObjectNull(acceptanceResultsAttrTypes),
		ScalingGroupID:       types.StringNull(),
		Bootstrap:            types.BoolValue(true),
		PackageMirror:        types.StringValue(bootstrap.MirrorInternet),
		Findings:             types.ListNull(findingObjectType),
		EstimatedHourlyPrice: types.Float64Null(),
		Tags:                 types.MapNull(types.StringType),
		Timeouts:             timeouts.Value{Object: types.ObjectNull(map[string]attr.Type{"create": types.StringType, "update": types.StringType, "delete": types.StringType})},
	}
	if len(user) > 0 {
		m.Tags = stringMap(user)
	}
	diags.Append(m.setNodes(ctx, nodes)...)
	return m, diags
}
