package provider

// The node bootstrap of a pool: what internal/bootstrap renders into each node's cloud-init, from
// the pool's kubernetes block, its labels and taints, and what only the configuration holds (the
// write-only CA key).

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle/upload"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
)

// renderBootstrap puts the node bootstrap (internal/bootstrap) in front of the user's user_data:
// workers when they have an API endpoint to join, control planes always. Input mistakes are
// plan-time errors on the attribute; at apply time (final) the document is rendered and merged.
func renderBootstrap(ctx context.Context, spec *nodepool.Spec, plan *nodePoolModel, k8s *k8sModel, mounts []string, final bool, in bootstrapInputs) diag.Diagnostics {
	var diags diag.Diagnostics
	if plan.Bootstrap.Equal(types.BoolValue(false)) {
		return diags
	}
	endpoint := k8s.APIEndpoint
	if endpoint.IsNull() && spec.Role == bootstrap.RoleControlPlane && !k8s.LoadBalancerID.IsNull() {
		// A control plane behind a gpucluster_control_plane_endpoint: its address is the endpoint.
		endpoint = types.StringUnknown()
		if in.lbEndpoint != "" {
			endpoint = types.StringValue(in.lbEndpoint)
		}
	}
	name := apiServerName(spec, k8s)
	// A control plane is always bootstrapped; workers when they have (or will have) an endpoint.
	rendered := spec.Role == bootstrap.RoleControlPlane || endpoint.IsUnknown() || endpoint.ValueString() != ""
	if rendered && spec.Network.Egress == EgressNone && !plan.PackageMirror.IsUnknown() && !k8s.ImageRegistry.IsUnknown() && !k8s.HostCUDA.IsUnknown() {
		if d := bootstrapWithoutEgress(spec, plan.PackageMirror.ValueString(), k8s, in.region); d.HasError() {
			diags.Append(d...)
			return diags
		}
	}
	if bootstrapNotKnownYet(plan, k8s, endpoint, in) || name.IsUnknown() {
		return diags // known at apply time; checked then
	}
	if spec.Role == bootstrap.RoleGPUWorker && endpoint.ValueString() == "" {
		if !final {
			diags.AddAttributeWarning(path.Root("kubernetes").AtName("api_endpoint"), "GPU nodes will not join Kubernetes",
				"Without kubernetes.api_endpoint and join_token the nodes get no bootstrap (driver, CUDA, NCCL, kubeadm join). "+
					"Set them, or set bootstrap = false to silence this and bring your own image or user_data.")
		}
		return diags
	}
	opts, d := bootstrapOptions(ctx, spec, plan, k8s, endpoint, mounts, final, in)
	diags.Append(d...)
	opts.Kubernetes.APIServerName = name.ValueString()
	loc, d := bundleLocation(ctx, plan, in.region)
	diags.Append(d...)
	opts.Kubernetes.JoinStore, d = joinStoreOf(ctx, plan, loc)
	diags.Append(d...)
	opts.Kubernetes.EtcdBackup, d = etcdBackupOf(ctx, plan, loc)
	diags.Append(d...)
	warnings, err := bootstrap.Validate(opts)
	if err != nil {
		diags.AddAttributeError(bootstrapErrorPath(err), "Invalid node bootstrap", err.Error())
		return diags
	}
	if !final {
		for _, w := range warnings {
			diags.AddAttributeWarning(path.Root("kubernetes"), "Node bootstrap", w)
		}
		return diags
	}
	doc, bundled, err := renderUserData(opts, spec.UserData, loc)
	if err != nil {
		diags.AddAttributeError(path.Root("user_data"), "Merging the node bootstrap with user_data", err.Error())
		return diags
	}
	spec.UserData, spec.Bundle = doc, bundled
	return diags
}

// apiServerName is the API server name of the pool's nodes (internal/bootstrap apiname.go):
// kubernetes.api_server_name, or for a control plane whose endpoint is its load balancer's
// address (load_balancer_id without api_endpoint) the load balancer's, the one
// gpucluster_control_plane_endpoint reports, so its nodes never reach their own API through the
// load balancer they are backends of. Unknown while the load balancer id is.
func apiServerName(spec *nodepool.Spec, k8s *k8sModel) types.String {
	if !k8s.APIServerName.IsNull() || spec.Role != bootstrap.RoleControlPlane || !k8s.APIEndpoint.IsNull() || k8s.LoadBalancerID.IsNull() {
		return k8s.APIServerName
	}
	if k8s.LoadBalancerID.IsUnknown() {
		return types.StringUnknown()
	}
	return types.StringValue(bootstrap.APIServerNameFor(k8s.LoadBalancerID.ValueString()))
}

// bootstrapNotKnownYet reports whether something the bootstrap is rendered from is not known
// yet: it is checked at apply time then.
func bootstrapNotKnownYet(plan *nodePoolModel, k8s *k8sModel, endpoint types.String, in bootstrapInputs) bool {
	return endpoint.IsUnknown() || k8s.JoinToken.IsUnknown() || k8s.CACertHash.IsUnknown() || k8s.PodSubnet.IsUnknown() || k8s.ImageRegistry.IsUnknown() || hasUnknown(plan.Mounts) ||
		k8s.CertificateKey.IsUnknown() || k8s.CACertPEM.IsUnknown() || k8s.CAKeyPEM.IsUnknown() || in.unknown() || hasUnknownMap(k8s.Addons) ||
		k8s.Versions.IsUnknown() || hasUnknownMap(k8s.NCCLEnv) || k8s.InsecureSkipCAVerification.IsUnknown() || k8s.ControlPlaneInit.IsUnknown() || k8s.HostCUDA.IsUnknown() ||
		k8s.ControlPlaneSize.IsUnknown()
}

// bootstrapOptions is what internal/bootstrap renders a node of this pool from; at plan time
// (final false) it warns about the image registry.
func bootstrapOptions(ctx context.Context, spec *nodepool.Spec, plan *nodePoolModel, k8s *k8sModel, endpoint types.String, mounts []string, final bool, in bootstrapInputs) (bootstrap.Options, diag.Diagnostics) {
	var diags diag.Diagnostics
	addons, d := mapOf(ctx, k8s.Addons)
	diags.Append(d...)
	versions, nccl, d := k8sSoftware(ctx, k8s)
	diags.Append(d...)
	registry, warn := resolveImageRegistry(k8s.ImageRegistry, in.region)
	if !final && spec.Role == bootstrap.RoleControlPlane && !k8s.joinsControlPlane() {
		// Once per cluster: the first control-plane pool, whose kubeadm pulls the control plane.
		addImageRegistryWarning(&diags, path.Root("kubernetes").AtName("image_registry"), warn)
	}
	opts := bootstrap.Options{
		Role:     spec.Role,
		Versions: versions,
		Kubernetes: bootstrap.Kubernetes{
			APIEndpoint:                endpoint.ValueString(),
			JoinToken:                  k8s.JoinToken.ValueString() + in.joinTokenWO.ValueString(), // at most one is set (ConflictsWith)
			CACertHash:                 k8s.CACertHash.ValueString(),
			InsecureSkipCAVerification: k8s.InsecureSkipCAVerification.ValueBool(),
			PodSubnet:                  k8s.PodSubnet.ValueString(),
			ImageRegistry:              registry,
			JoinControlPlane:           k8s.joinsControlPlane(),
			CertificateKey:             k8s.CertificateKey.ValueString() + in.certKeyWO.ValueString(),
			ControlPlaneSize:           int(k8s.ControlPlaneSize.ValueInt64()),
			CACertPEM:                  k8s.CACertPEM.ValueString(),
			CAKeyPEM:                   k8s.CAKeyPEM.ValueString() + in.caKeyWO.ValueString(), // at most one is set (ConflictsWith)
			Addons:                     addons,
			Labels:                     spec.Labels,
		},
		Mounts:        mounts,
		ERDMA:         spec.ERDMA,
		NCCLEnv:       nccl,
		PackageMirror: plan.PackageMirror.ValueString(),
		// Fabric Manager by the planned type (catalog.InstanceType.NVSwitch). A fallback type
		// without NVSwitch would fail the fabric-manager phase: the pool's candidates for 8 GPUs
		// of one model are all NVSwitch types or none.
		NVSwitch: spec.Role == bootstrap.RoleGPUWorker && len(spec.Types) > 0 && nvswitchType(spec.Types[0]),
		HostCUDA: k8s.HostCUDA.ValueBool(),
		// Autoscaling pools only: the Cluster Autoscaler needs the provider id, and a spot mix
		// that launches spot nodes needs the handler. Fixed pools keep their user data.
		ProviderID:              spec.Autoscale != nil,
		SpotInterruptionHandler: launchesSpot(spec),
	}
	for _, t := range spec.Taints {
		opts.Kubernetes.Taints = append(opts.Kubernetes.Taints, bootstrap.ParseTaint(t))
	}
	return opts, diags
}

// renderUserData renders the bootstrap and merges the user's user_data after it, within the
// size ECS accepts. With a bundle location the bootstrap goes in the bundle (returned, to be
// uploaded) and the user data starts with the stub that fetches it instead.
func renderUserData(opts bootstrap.Options, userData string, loc *upload.Location) (string, *upload.Prepared, error) {
	doc, err := bootstrap.Render(opts)
	var bundled *upload.Prepared
	if err == nil && loc != nil {
		var p upload.Prepared
		p, err = upload.Prepare(doc, *loc)
		doc, bundled = p.Stub, &p
	}
	if err == nil {
		doc, err = bootstrap.Merge(doc, userData)
	}
	if err == nil {
		doc = bootstrap.PackUserData(doc)
		if len(doc) > bootstrap.MaxUserDataBytes {
			err = fmt.Errorf("the node's user data (bootstrap, add-ons and user_data), gzip-compressed, is %d bytes; ECS accepts at most %d: shorten user_data or kubernetes.addons", len(doc), bootstrap.MaxUserDataBytes)
		}
	}
	return doc, bundled, err
}

// nvswitchType reports whether the catalog marks the instance type as an NVSwitch system.
func nvswitchType(name string) bool {
	it, ok := catalog.LookupInstanceType(name)
	return ok && it.NVSwitch
}

// bootstrapWithoutEgress is the refusal of a pool whose bootstrap downloads from the internet on
// a network that gives its members no route out: every node's cloud-init would fail. A bootstrap
// that takes everything from inside the VPC (package_mirror = "alibaba_vpc" and an in-VPC image
// registry, the defaults in mainland China) needs no route out and is not refused: the in-VPC
// mirror and Container Registry's VPC endpoints answer without a NAT gateway.
func bootstrapWithoutEgress(spec *nodepool.Spec, mirror string, k8s *k8sModel, region string) diag.Diagnostics {
	var diags diag.Diagnostics
	registry, _ := resolveImageRegistry(k8s.ImageRegistry, region)
	sources := bootstrap.InternetSources(bootstrap.Options{Role: spec.Role, PackageMirror: mirror, Region: region,
		HostCUDA: k8s.HostCUDA.ValueBool(), Kubernetes: bootstrap.Kubernetes{ImageRegistry: registry}})
	if len(sources) == 0 {
		return diags
	}
	diags.AddAttributeError(path.Root("package_mirror"), "The node bootstrap needs the internet; the network has no egress",
		fmt.Sprintf("This pool's node bootstrap (bootstrap = true, package_mirror = %q, kubernetes.image_registry = %q, role %s) downloads from the internet: %s. "+
			"Its network %s has egress.mode = \"none\" (gpucluster_rdma_network), which gives members no route out, so every node's "+
			"cloud-init would fail.\nFix: set egress = { mode = \"nat\" } on the network (or \"existing\" when a NAT gateway or transit "+
			"router of your own routes the VPC out), or take everything from inside the VPC: package_mirror = \"alibaba_vpc\", "+
			"kubernetes.image_registry on a registry's VPC endpoint (registry-vpc.<region>.aliyuncs.com/<namespace>) and host_cuda = false.",
			mirror, registry, spec.Role, strings.Join(sources, "; "), spec.Network.ID))
	return diags
}

// bootstrapErrorPath points a bootstrap input error at the node pool attribute it came from.
// bootstrap names its Options fields: the pool nests versions under kubernetes, and its labels,
// taints and add-ons are written differently from the Options entries the error names, so the
// diagnostic points at the kubernetes attribute holding them (or the mounts entry).
func bootstrapErrorPath(err error) path.Path {
	fallback := path.Root("kubernetes")
	steps := planErrorPath(err, fallback).Steps()
	if len(steps) < 2 {
		return fallback
	}
	first, _ := steps[0].(path.PathStepAttributeName)
	switch first {
	case "versions":
		if name, ok := steps[1].(path.PathStepAttributeName); ok {
			return fallback.AtName("versions").AtName(string(name))
		}
	case "mounts":
		if i, ok := steps[1].(path.PathStepElementKeyInt); ok {
			return path.Root("mounts").AtListIndex(int(i))
		}
	case "kubernetes":
		if name, ok := steps[1].(path.PathStepAttributeName); ok {
			return fallback.AtName(string(name))
		}
	case "bootstrap_bundle":
		if name, ok := steps[1].(path.PathStepAttributeName); ok {
			return path.Root("bootstrap_bundle").AtName(string(name))
		}
	}
	return fallback
}

// k8sSoftware reads kubernetes.versions and kubernetes.nccl_env.
func k8sSoftware(ctx context.Context, k8s *k8sModel) (bootstrap.Versions, map[string]string, diag.Diagnostics) {
	var diags diag.Diagnostics
	var v bootstrap.Versions
	if !k8s.Versions.IsNull() && !k8s.Versions.IsUnknown() {
		var bv bootstrapVersions
		diags.Append(k8s.Versions.As(ctx, &bv, basetypes.ObjectAsOptions{})...)
		v = bootstrap.Versions{Driver: bv.Driver.ValueString(), CUDA: bv.CUDA.ValueString(), NCCL: bv.NCCL.ValueString(), Kubernetes: bv.Kubernetes.ValueString()}
	}
	nccl, d := mapOf(ctx, k8s.NCCLEnv)
	diags.Append(d...)
	return v, nccl, diags
}

// softwareHashInput is what the control-plane role and the software settings add to a pool's spec
// hash, "" when none is set.
func softwareHashInput(k8s *k8sModel, v bootstrap.Versions, nccl map[string]string) string {
	var parts []string
	if k8s.joinsControlPlane() {
		parts = append(parts, "control_plane_join")
	}
	if n := k8s.APIServerName.ValueString(); n != "" {
		parts = append(parts, "api_server_name="+n)
	}
	if v != (bootstrap.Versions{}) {
		parts = append(parts, fmt.Sprintf("versions=%+v", v))
	}
	for _, k := range slices.Sorted(maps.Keys(nccl)) {
		parts = append(parts, "nccl_env."+k+"="+nccl[k])
	}
	if k8s != nil && k8s.HostCUDA.ValueBool() {
		parts = append(parts, "host_cuda")
	}
	return strings.Join(parts, "\n")
}

// hasUnknownMap reports whether a map or one of its values is not known yet.
func hasUnknownMap(m types.Map) bool {
	return m.IsUnknown() || slices.ContainsFunc(slices.Collect(maps.Values(m.Elements())), attr.Value.IsUnknown)
}

// bootstrapInputs is what the node bootstrap needs besides the plan: the endpoint of
// kubernetes.load_balancer_id, and the write-only secrets (CA key, join token, certificate key),
// which are null in every plan and state and known only from the configuration.
type bootstrapInputs struct {
	// lbEndpoint is address:6443 of kubernetes.load_balancer_id when the pool has no
	// api_endpoint and the load balancer exists; "" otherwise (the apply looks again).
	lbEndpoint string
	// region is the provider's: it picks kubernetes.image_registry's default.
	region      string
	caKeyWO     types.String
	joinTokenWO types.String
	certKeyWO   types.String
}

// unknown reports whether a write-only secret is not known yet (it comes from something that
// is created in this apply).
func (in bootstrapInputs) unknown() bool {
	return in.caKeyWO.IsUnknown() || in.joinTokenWO.IsUnknown() || in.certKeyWO.IsUnknown()
}

func (r *nodePoolResource) bootstrapInputs(ctx context.Context, plan *nodePoolModel, config tfsdk.Config) (bootstrapInputs, diag.Diagnostics) {
	in := bootstrapInputs{caKeyWO: types.StringNull(), joinTokenWO: types.StringNull(), certKeyWO: types.StringNull()}
	if r.client != nil {
		in.region = r.client.Region()
	}
	var diags diag.Diagnostics
	if plan.Kubernetes.IsNull() || plan.Kubernetes.IsUnknown() {
		return in, diags
	}
	var cfg types.Object
	diags.Append(config.GetAttribute(ctx, path.Root("kubernetes"), &cfg)...)
	if !cfg.IsNull() && !cfg.IsUnknown() {
		for name, dst := range map[string]*types.String{"ca_key_pem_wo": &in.caKeyWO, "join_token_wo": &in.joinTokenWO, "certificate_key_wo": &in.certKeyWO} {
			if v, ok := cfg.Attributes()[name].(types.String); ok {
				*dst = v
			}
		}
	}
	var k k8sModel
	if d := plan.Kubernetes.As(ctx, &k, basetypes.ObjectAsOptions{}); d.HasError() || r.client == nil {
		return in, diags
	}
	if !k.APIEndpoint.IsNull() || k.LoadBalancerID.IsNull() || k.LoadBalancerID.IsUnknown() {
		return in, diags
	}
	if lb, err := r.client.FindLoadBalancer(ctx, k.LoadBalancerID.ValueString()); err == nil && lb.Address != "" {
		in.lbEndpoint = apiEndpoint(lb.Address)
	}
	return in, diags
}

// launchesSpot reports whether an autoscaling pool's group launches spot nodes: spot is on and not
// every node above the on-demand base is pay-as-you-go.
func launchesSpot(spec *nodepool.Spec) bool {
	return spec.Autoscale != nil && spec.Spot != "" && spec.Spot != "NoSpot" && spec.Autoscale.Mix.OnDemandPercentAboveBase < 100
}
